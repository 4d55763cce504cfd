"""An edit to a template as data: {key path: value} set on a template dict (what a failure
group's fix, a sketch's field and Apply write into the editor's template).
"""

from __future__ import annotations

import json


def apply_edit(template: dict, fix: dict) -> dict:
    """`template` with each {key path: value} of `fix` set (a new field goes before the
    implicit field, where a reader looks for it). `template` is not changed."""
    changed = json.loads(json.dumps(template))
    for path, value in fix.items():
        parts = path.split(".")
        if parts[0] == "start_anchor" or parts[0] == "start_anchor_pattern":
            changed.pop("start_anchor", None)
            changed.pop("start_anchor_pattern", None)
        target = changed
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        if parts[:-1] == ["fields"] and parts[-1] not in target:
            items = list(target.items())
            at = next(
                (
                    i
                    for i, (_, spec) in enumerate(items)
                    if "open" not in spec and "open_pattern" not in spec
                ),
                len(items),
            )
            items.insert(at, (parts[-1], value))
            target.clear()
            target.update(items)
        else:
            target[parts[-1]] = value
    return changed
