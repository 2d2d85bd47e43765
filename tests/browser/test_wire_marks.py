"""What the real OpenAI wire brings, as the inspector shows it in a real JupyterLab: a reasoning
model's reasoning item listed in the Request tab of the call that sent it back, and an answer
cut at the token limit marked on the answer line and in the static record. The kernel talks to
the scripted OpenAI server of ``tests/openai_server.py`` on 127.0.0.1 through the real
``openai`` client."""

from __future__ import annotations

from pathlib import Path

import pytest
from labserver import ARTIFACTS, LabServer, NewPage, run_all_cells, write_notebook

pytestmark = pytest.mark.browser

TESTS = Path(__file__).resolve().parents[1]
SUMMARY = "Oslo: <b>look it up</b> first."
"""The reasoning summary (markup in it must show as text)."""


def test_reasoning_items_and_a_cut_answer_in_the_inspector(
    tmp_path: Path, lab_server: LabServer, new_page: NewPage
) -> None:
    from playwright.sync_api import expect

    cells = [
        "%load_ext agentnb",
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
        "from openai_server import OpenAIServer, Reply\n"
        "from agentnb import Agent\nfrom agentnb.models import OpenAIResponses\nfrom agentnb.ipython.inspector import Inspector\n\n"
        "server = OpenAIServer().__enter__()\n"
        f"server.add(Reply(reasoning={SUMMARY!r}, tool_calls=[('lookup', {{'city': 'Oslo'}})], reasoning_tokens=12),\n"
        "           Reply(text='Sunny in Oslo.'),\n"
        "           Reply(text='The three reasons are: first, the', finish='length'))\n\n"
        'def lookup(city: str) -> str:\n    """Look up the weather."""\n    return f\'sunny in {city}\'\n\n'
        "model = OpenAIResponses('gpt-5-mini', base_url=server.url, max_retries=0, request_options={'store': False})\n"
        "w = Agent('w', model, tools=[lookup])\n"
        "display(Inspector.for_agent(w))",
        "print(w.run('Weather in Oslo?').content)",
        "r = w.run('Give three reasons.')\nprint(r.truncated, server.problems)\nr",
    ]
    source = write_notebook(tmp_path / "wire.ipynb", cells)
    port, _ = lab_server(source, "wire.ipynb")
    ARTIFACTS.mkdir(exist_ok=True)
    page, _log = new_page()
    outputs = run_all_cells(page, port, "wire.ipynb", len(cells))
    joined = "\n".join(outputs)
    assert "Sunny in Oslo." in joined and "True []" in joined  # truncated, and the server found nothing wrong

    # The static record of the cut turn says so.
    record = page.locator(".agentnb-record").last
    expect(record.locator(".agentnb-record-cut")).to_have_text(
        "(answer cut at the token limit)", timeout=30_000
    )

    inspector = page.locator(".anb-root")
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 2", timeout=30_000)
    expect(inspector.locator(".anb-answer .anb-cut")).to_have_text("answer cut at the token limit")
    inspector.screenshot(path=str(ARTIFACTS / "wire-cut-answer.png"))

    # Turn 1: its answer is whole; its second request sent the reasoning item back.
    inspector.locator(".anb-prev").click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 1 of 2")
    expect(inspector.locator(".anb-answer .anb-cut")).to_have_count(0)
    inspector.locator("[role=tab][data-tab='request']").click()
    expect(inspector.locator(".anb-pick")).to_have_count(2)
    inspector.locator(".anb-pick").last.click()
    row = inspector.locator(".anb-role-reasoning")
    expect(row).to_have_count(1)
    expect(row.locator("summary")).to_have_text("reasoning: " + SUMMARY)
    row.locator("summary").click()
    expect(row.locator(".anb-note")).to_contain_text("sent back as rs_1 with its encrypted content")
    expect(row.locator("b")).to_have_count(0)  # the summary's markup is text
    # The rows in the order sent: the user's message, the reasoning, the call, its output.
    heads = inspector.locator(".anb-request .anb-message-row > summary").all_inner_texts()
    assert [h.split(":")[0] for h in heads[:4]] == [
        "user",
        "reasoning",
        "assistant",
        "tool (call_1_0)",
    ], heads
    inspector.screenshot(path=str(ARTIFACTS / "wire-reasoning-request.png"))
