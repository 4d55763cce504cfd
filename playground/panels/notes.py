"""The short notes handlers show beside their results: the export's note, warning lines (a
share link that does not carry everything, a link's problems), the fit ranking's table, the
STALE banner over a derived view."""

from __future__ import annotations

from .fragments import draw


def export_note(merged: str, milliseconds: float, changes: list[str], remaining: list) -> str:
    """The export's note: what was written (`merged` says where the template went), in how long,
    what the export changed for its runtime (`changes`), and what that runtime still refuses
    or reads differently (`remaining`: portability findings with ``severity``, ``path`` and
    ``message``; those of severity "info" are left out)."""
    return draw(
        "export_note",
        merged=merged,
        milliseconds=milliseconds,
        changes=changes,
        remaining=[finding for finding in remaining if finding.severity != "info"],
    )


def warnings_html(texts: list[str], element_id: str = "", css: str = "") -> str:
    """A warning line (△) for each of `texts`, with the id `element_id` and the extra classes
    `css` when given; "" for no text."""
    return draw("warnings", texts=[text for text in texts if text], element_id=element_id, css=css)


def fits_table(ranked: list, family_note: str) -> str:
    """Which template fits?: `ranked` (`playground.authoring.fit` results, best first: ``name``,
    ``errors``, ``claimed``, ``unclaimed``, ``warnings``, ``note``, ``claims_nothing``) as a
    table, each template's first problem on a line of its own; `family_note` (a warning about
    the prefix's family) above it when given."""
    return draw("fits", ranked=ranked, family_note=family_note)


def stale_banner(name: str, why: str) -> str:
    """The STALE banner over derived view `name` (its id is ``<name>-stale``): `why` says what
    changed and what to press."""
    return draw("stale_banner", view=name, why=why)
