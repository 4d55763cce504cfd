"""Inputs the tests read from the shared folder beside the checkout (`../shared`, or
$RESPONSE_TEMPLATES_SHARED): real chat templates and the field-report cases. They are not part of
the repository; tests that need them skip, saying why, when the folder is absent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.paths import ROOT as REPO_ROOT

SHARED = Path(os.environ.get("RESPONSE_TEMPLATES_SHARED", REPO_ROOT.parent / "shared"))
FIELD_REPORTS_PATH = SHARED / "cases" / "field_reports.json"


needs_field_reports = pytest.mark.skipif(
    not FIELD_REPORTS_PATH.is_file(),
    reason=f"no field reports at {FIELD_REPORTS_PATH} (set RESPONSE_TEMPLATES_SHARED to the folder holding cases/)",
)


def field_reports() -> dict[str, dict]:
    """The field-report cases by name ({} when the file is absent: tests that read them are
    marked `needs_field_reports`)."""
    if not FIELD_REPORTS_PATH.is_file():
        return {}
    return {
        case["name"]: case
        for case in json.loads(FIELD_REPORTS_PATH.read_text(encoding="utf-8"))["cases"]
    }
