"""``python -m engine``: the command line (`engine.cli`)."""

from .cli import main

raise SystemExit(main())
