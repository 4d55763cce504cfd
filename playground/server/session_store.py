"""Gradio's own store of page sessions, kept lean.

Gradio keeps, for every page session it has seen (up to `state_session_capacity`,
PLAYGROUND_LIMITS `sessions`), a copy of the whole page's configuration and the
last value of every input and output of every call (`SessionState.config_values`).
Only its deep links (`/gradio_api/deep_link`, which this page does not use) read
them back. Kept, they would hold what any visitor sent (a 15 MB text in any box)
for as long as Gradio keeps the session, outside every cap of
`playground.parse.session`: 500 sessions of a few such texts are gigabytes.

`keep_lean()` makes Gradio keep none of it: a new session starts with no copy of
the configuration, and values are not recorded. What Gradio needs to run the
page (each session's `gr.State` values and its components' updated properties)
is kept as before.
"""

from __future__ import annotations

import os
from copy import copy

from gradio import state_holder


def keep_lean() -> None:
    """Patch Gradio's `SessionState` so it keeps no copy of the page's configuration and no
    input or output values (see the module docstring). Idempotent."""
    store = state_holder.SessionState
    if getattr(store, "_kept_lean", False):
        return

    def init(self, blocks) -> None:
        # Gradio's own init, without building the configuration copy (milliseconds of work for
        # every fresh session a visitor names); `tests/app/test_app_limits.py` checks that it
        # sets the same attributes as Gradio's.
        self.blocks_config = copy(blocks.default_config)
        self.config_values = {}
        self.state_data = {}
        self._state_ttl = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST") else 3600

    store._gradio_init = store.__init__
    store.__init__ = init
    store._update_config = lambda self, key: None
    store._update_value_in_config = lambda self, key, value: None
    store.__setitem__ = _set_item_without_config(store.__setitem__)
    store._kept_lean = True


def _set_item_without_config(set_item):
    """`SessionState.__setitem__` without the configuration copy it records for deep links."""

    def lean(self, key, value) -> None:
        set_item(self, key, value)
        self.config_values.pop(key, None)

    return lean
