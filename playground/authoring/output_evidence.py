"""What the page knows that confirms a template's delimiters, for judging a near miss.

A near miss in the output (``'</tool_calsl>'`` where the template expects ``'</tool_call>'``)
is either the template's misspelling or the output's. The page holds more than the parse:
the chat template's renders (the inference's findings and matrix rows, the chat-template
check's rows), the prompt, the author's other outputs (the test cases), and for a shipped
template the outputs of its samples. When one of them
holds the delimiter the template expects, the output is what is misspelt, a generation error,
and `with_output_evidence` rewrites the view's near misses to say so, without a template edit
(`engine.authoring.delimiter_evidence`).
"""

from __future__ import annotations

import dataclasses

from engine.authoring.delimiter_evidence import (
    SHIPPED_SAMPLES,
    DelimiterEvidence,
    blame_the_output,
    shipped_outputs,
)

from ..parse.parse_view import ParseView
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from ..server.input_readers import InputError
from .test_cases import read_cases


def page_evidence(
    session: Session, workspace: WorkspaceInputs, test_cases_text: str = ""
) -> DelimiterEvidence:
    """The page's evidence for the template in `workspace`: the chat template's renders the
    session holds (the last inference's findings and rows, the last check's rows), the prompt,
    and the generations of the test cases (`test_cases_text`, JSON) other than this one."""
    renders: list[str] = []
    inference = session.inference or {}
    for finding in inference.get("findings", []):
        renders += [render.get("text", "") for render in finding.get("renders", [])]
    rows = list((inference.get("report") or {}).get("situations", [])) + list(session.check_rows)
    for row in rows:
        if row.get("renderable"):
            renders.append((row.get("prompt") or "") + (row.get("generation") or ""))
    try:
        cases = read_cases(test_cases_text)
    except InputError:
        cases = []
    outputs = [
        case["generation"]
        for case in cases
        if case.get("generation") and case["generation"] != workspace.generation
    ]
    return DelimiterEvidence.of(renders=renders, prefix=workspace.prefix, outputs=outputs)


def with_output_evidence(
    view: ParseView, session: Session, workspace: WorkspaceInputs, test_cases_text: str = ""
) -> ParseView:
    """`view` with each near miss that the page's evidence (`page_evidence`) confirms the
    template's side of named as the output's misspelling (no fix); `view` itself when it has
    no near miss or nothing confirms one."""
    if not any(d.code == "near-miss" for d in view.diagnoses):
        return view
    evidence = page_evidence(session, workspace, test_cases_text)
    if view.template is not None:  # a shipped template's samples confirm its delimiters
        shipped = tuple((SHIPPED_SAMPLES, text) for text in shipped_outputs(view.template))
        evidence = dataclasses.replace(evidence, texts=evidence.texts + shipped)
    blamed = blame_the_output(view.diagnoses, evidence)
    if blamed == view.diagnoses:
        return view
    return dataclasses.replace(view, diagnoses=blamed)
