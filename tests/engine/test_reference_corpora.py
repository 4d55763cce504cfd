"""The shipped templates and the templates inference writes read every corpus as transformers 5.25
does: the samples, the shared real outputs (with the templates inferred from their chat
templates, with and without examples) and the development set (every renderable row of the
conformance matrix of the shared chat templates, with the shipped template of each one's
family and with its inferred template). Compared in raise mode, bar the documented
differences (tests/support/reference_parity.py). The shared material is read from
../shared and its tests skip when it is absent.
"""

from __future__ import annotations

import pytest

from engine import check_conformance, infer_template
from engine.authoring.samples import load_samples
from engine.chat_templates.conformance import TOOLS
from engine.template_files import load_template_file
from tests.support.paths import CHAT_TEMPLATES, MANIFEST, TEMPLATE_FOR, needs_shared
from tests.support.real_outputs import (
    MORE,
    as_examples,
    cases_by_chat_template,
    load_cases,
    manifest,
    needs_real_outputs,
)
from tests.support.reference_parity import compare

# Samples that need what the reference does not have (it keeps a JSON string of arguments).
ENGINE_ONLY = "decode-json-strings"


def test_every_sample_reads_as_in_transformers():
    differences, compared = [], 0
    for sample in load_samples():
        if ENGINE_ONLY in sample.needs:
            continue
        compared += 1
        why = compare(sample.template, sample.generation, sample.prefix, sample.tools)
        if why:
            differences.append(f"{sample.id}: {why}")
    assert differences == []
    assert compared > 200


@needs_real_outputs
def test_the_templates_inferred_for_the_real_outputs_read_them_as_transformers_does():
    by_file = cases_by_chat_template(load_cases())
    differences, compared = [], 0
    for entry in manifest(MORE):
        cases = by_file.get(entry["file"], [])
        if not cases:
            continue
        text = (MORE / entry["file"]).read_text(encoding="utf-8")
        tokens = {"bos_token": entry["bos_token"] or "", "eos_token": entry["eos_token"] or ""}
        templates = {
            "inferred": infer_template(text, **tokens).template,
            "taught": infer_template(text, examples=as_examples(cases[:2]), **tokens).template,
        }
        for how, template in templates.items():
            for case in cases:
                compared += 1
                why = compare(template, case["output"], case["prefix"] or "", case.get("tools"))
                if why:
                    differences.append(f"{case['id']} ({how}): {why}")
    assert differences == []
    assert compared == 2 * len(load_cases())


def _matrix_differences(template: dict, entry: dict) -> tuple[list[str], int]:
    """The renderable rows of `template`'s conformance matrix on `entry`'s chat template that
    the reference reads differently, and how many rows were compared."""
    report = check_conformance(
        template,
        (CHAT_TEMPLATES / entry["file"]).read_text(encoding="utf-8"),
        bos_token=entry["bos_token"],
        eos_token=entry["eos_token"],
    )
    differences, compared = [], 0
    for row in report.situations:
        if not row.renderable:
            continue
        compared += 1
        why = compare(template, row.generation, row.prompt, TOOLS if row.tools else None)
        if why:
            differences.append(f"{entry['file']} {row.name}: {why}")
    return differences, compared


@needs_shared
@pytest.mark.parametrize("entry", MANIFEST, ids=lambda entry: entry["file"])
def test_the_development_set_reads_as_in_transformers(entry):
    shipped = load_template_file(TEMPLATE_FOR.get(entry["file"], entry["family"])).response_template
    inferred = infer_template(
        (CHAT_TEMPLATES / entry["file"]).read_text(encoding="utf-8"),
        bos_token=entry["bos_token"] or "",
        eos_token=entry["eos_token"] or "",
    ).template
    differences, compared = _matrix_differences(shipped, entry)
    more, more_compared = _matrix_differences(inferred, entry)
    assert differences + more == []
    assert compared and more_compared
