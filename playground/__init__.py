"""The playground app's parts: everything `app.py` wires into its Gradio layout.

`engine` is the library; this package holds what only the app (and its
scripts) need, such as running a model live (`playground.generation`).
"""
