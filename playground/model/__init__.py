"""The model runner: `generation` loads a model and streams its output (with the engine's
grammar matching, the only place that imports torch), `loaded` keeps the models loaded (shared
by every visitor), `hub` fails fast without the Hub. Parsing its tokens as they arrive is
Generate live's (`playground.handlers.generate_live`)."""
