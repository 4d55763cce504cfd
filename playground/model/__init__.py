"""The model runner: `generation` loads a model and streams its output (the only place that
imports torch), `live` parses it as the tokens arrive, `hub` fails fast without the Hub."""
