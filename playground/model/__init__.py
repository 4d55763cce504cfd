"""The model runner: `generation` loads a model and streams its output (the only place that
imports torch), `hub` fails fast without the Hub. Parsing its tokens as they arrive is
Generate live's (`playground.live`)."""
