"""The inspector as a debugger in a real JupyterLab, driven through Debian's Chromium.

``debugger_demo.ipynb`` runs three turns of a shopping-list agent (a typed state, one key hidden
from the model, a long last answer), forks it at turn 1 with edited instructions and runs the same
message, then leaves ``%agentnb diff`` in a cell. The test reads the inspector's DOM: token counts
per section and the template map, the state block's cost growing in History, the hidden key
marked beside what the model saw, an edit of the state (refused by the schema in place, then
applied) re-rendering the next prompt at once, a key added and taken back, the fork compared
side by side, the long answer shown whole, and the static compare record. Screenshots land in
``test-artifacts/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from labserver import ARTIFACTS, LabServer, NewPage, run_all_cells

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).with_name("debugger_demo.ipynb")
CODE_CELLS = 7


def numbers(texts: list[str]) -> list[int]:
    return [int(re.sub(r"[^0-9]", "", t)) for t in texts]


def test_the_inspector_as_a_debugger(lab_server: LabServer, new_page: NewPage) -> None:
    from playwright.sync_api import expect

    port, _work = lab_server(NOTEBOOK, "debugger.ipynb")
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page(height=1100)
    outputs = run_all_cells(page, port, "debugger.ipynb", CODE_CELLS)
    assert "No sweets on this list: I did not add cake." in "\n".join(outputs)

    inspector = page.locator(".anb-root")
    expect(inspector).to_have_count(1, timeout=30_000)
    expect(inspector.locator(".anb-pos")).to_have_text("turn 3 of 3", timeout=30_000)
    tab = lambda name: inspector.locator(f"[role=tab][data-tab='{name}']")  # noqa: E731

    # The long last answer scrolls in its box, or shows whole.
    box = inspector.locator(".anb-answer-box")
    toggle = inspector.locator(".anb-answer-toggle")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_text("show all ▾")
    folded = box.evaluate("(el) => el.clientHeight")
    assert box.evaluate("(el) => el.scrollHeight > el.clientHeight")
    toggle.click()
    expect(toggle).to_have_text("fold ▴")
    assert box.evaluate("(el) => el.scrollHeight <= el.clientHeight + 1")
    assert box.evaluate("(el) => el.clientHeight") > 2 * folded
    expect(inspector.locator(".anb-answer .anb-text")).to_contain_text(
        "8. soap: in aisle 8, about 9 euros\nThat is all."
    )
    inspector.screenshot(path=str(ARTIFACTS / "debugger-long-answer.png"))
    toggle.click()
    expect(toggle).to_have_text("show all ▾")

    # Prompt: each section with its token count, the total, and the whole template map.
    state_section = inspector.locator(".anb-section-state")
    expect(state_section.locator(".anb-section-tokens")).to_have_text(re.compile(r"^≈\d+ tok$"))
    expect(inspector.locator(".anb-section[data-source='instructions'] .anb-section-tokens")).to_have_text(
        re.compile(r"^≈\d+ tok$")
    )
    expect(inspector.locator(".anb-tokens-line")).to_contain_text(
        "≈ estimate: no tokenizer known for scripted"
    )
    expect(inspector.locator(".anb-tokens-line")).to_contain_text(
        re.compile(r"earlier turns ≈\d+ · user message ≈\d+ · total ≈\d+")
    )
    expect(state_section).not_to_contain_text("sk-demo-123")
    expect(inspector.locator(".anb-map-filled[data-placeholder='items']")).to_contain_text(
        "← session_state.items"
    )
    expect(inspector.locator(".anb-map-hidden")).to_have_text("hidden from the modelapi_key")
    inspector.screenshot(path=str(ARTIFACTS / "debugger-tokens.png"))

    # History: the state block's cost, turn by turn, grows with the list.
    tab("history").click()
    costs = inspector.locator("td.anb-state-tokens")
    expect(costs).to_have_count(3)
    first, second, third = numbers(costs.all_inner_texts())
    assert first < second <= third, (first, second, third)
    assert all(t.startswith("≈") for t in costs.all_inner_texts())
    inspector.screenshot(path=str(ARTIFACTS / "debugger-history.png"))

    # State: the hidden key is marked, and what the model saw is beside the tree.
    tab("state").click()
    api_key = inspector.locator(".anb-node[data-path='/api_key']")
    expect(api_key.locator(".anb-badge-hidden")).to_have_text("hidden from the model")
    seen = inspector.locator(".anb-model-view")
    expect(seen.locator(".anb-label").first).to_have_text("what the model saw in turn 3")
    expect(seen.locator(".anb-model-block")).to_contain_text("'budget': 20")
    expect(seen.locator(".anb-model-block")).not_to_contain_text("api_key")
    expect(seen.locator(".anb-model-hidden")).to_have_text("hidden from the model: api_key")
    inspector.screenshot(path=str(ARTIFACTS / "debugger-hidden.png"))

    # An edit the schema refuses says why in place and changes nothing.
    inspector.locator("button.anb-edit-toggle").click()
    budget = inspector.locator(".anb-node[data-path='/budget']")
    budget.locator("button.anb-edit").click()
    text = inspector.locator(".anb-editor textarea.anb-edit-text")
    expect(text).to_have_value("20")
    text.fill("thirty")
    inspector.locator("button.anb-edit-apply").click()
    expect(inspector.locator(".anb-edit-error")).to_have_text(re.compile(r"^not JSON: "))
    text = inspector.locator(".anb-editor textarea.anb-edit-text")
    text.fill('"thirty"')
    inspector.locator("button.anb-edit-apply").click()
    expect(inspector.locator(".anb-edit-error")).to_have_text(
        "state key 'budget' expects int, got str: 'thirty'"
    )
    expect(inspector.locator(".anb-edit-row")).to_have_count(0)

    # A valid edit: the tree, the pending edits and the next prompt follow at once.
    text = inspector.locator(".anb-editor textarea.anb-edit-text")
    text.fill("35")
    text.press("Control+Enter")
    expect(inspector.locator(".anb-editor")).to_have_count(0)
    expect(inspector.locator(".anb-node[data-path='/budget'] .anb-value")).to_have_text("35")
    edit_row = inspector.locator(".anb-edit-row[data-path='/budget']")
    expect(edit_row.locator(".anb-change-values")).to_have_text("20 → 35")
    expect(edit_row.locator(".anb-change-by")).to_have_text("user")
    expect(inspector.locator("button.anb-undo")).to_have_text("↶ undo (1)")
    expect(seen.locator(".anb-label").first).to_have_text("what the model will see next")
    expect(seen.locator(".anb-model-block")).to_contain_text("'budget': 35")
    expect(seen.locator(".anb-model-changed")).to_contain_text(
        "the next system prompt changes in: instructions, session_state"
    )
    inspector.screenshot(path=str(ARTIFACTS / "debugger-edit.png"))

    # Preview: the next request, re-rendered without a model call, changes marked.
    seen.locator("button.anb-open-preview").click()
    expect(tab("preview")).to_have_attribute("aria-selected", "true")
    expect(tab("preview")).to_have_text("Preview (1 edit)")
    expect(inspector.locator(".anb-preview-what")).to_have_text(
        'the next prompt, after 1 edit(s) of the state since turn 3, for "what is on my list?" (changed sections marked)'
    )
    changed = inspector.locator(".anb-preview .anb-section-changed")
    expect(changed).to_have_count(2)
    expect(
        inspector.locator(".anb-preview .anb-section[data-source='instructions'] .anb-section-text")
    ).to_contain_text("Budget: 35")
    expect(inspector.locator(".anb-request-head")).to_contain_text("scripted · 12 message(s) · 1 tool(s)")
    inspector.screenshot(path=str(ARTIFACTS / "debugger-preview.png"))

    # A key added by hand, then taken back.
    tab("state").click()
    inspector.locator("button.anb-add-key").click()
    inspector.locator(".anb-editor input.anb-edit-key").fill("coupon")
    inspector.locator(".anb-editor textarea.anb-edit-text").fill('"SAVE5"')
    inspector.locator("button.anb-edit-apply").click()
    expect(inspector.locator(".anb-node[data-path='/coupon'] .anb-value")).to_have_text('"SAVE5"')
    expect(inspector.locator("button.anb-undo")).to_have_text("↶ undo (2)")
    inspector.locator("button.anb-undo").click()
    expect(inspector.locator(".anb-node[data-path='/coupon']")).to_have_count(0)
    expect(inspector.locator("button.anb-undo")).to_have_text("↶ undo (1)")
    # A key removed, and taken back.
    inspector.locator(".anb-node[data-path='/notes'] button.anb-remove").click()
    expect(inspector.locator(".anb-node[data-path='/notes']")).to_have_count(0)
    expect(inspector.locator(".anb-edit-row[data-path='/notes'] .anb-change-values")).to_have_text(
        '"weekly shop" (removed)'
    )
    expect(seen.locator(".anb-model-block")).not_to_contain_text("weekly shop")
    inspector.locator("button.anb-undo").click()
    expect(inspector.locator(".anb-node[data-path='/notes'] .anb-value")).to_have_text('"weekly shop"')

    # Compare: turn 2 beside the fork's turn 2 (same message, edited instructions).
    tab("history").click()
    inspector.locator("tr.anb-history-row").nth(1).click()
    expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 3")
    tab("compare").click()
    expect(inspector.locator(".anb-cmp-side[data-side='left'] select.anb-cmp-agent")).to_have_value("shop")
    expect(inspector.locator(".anb-cmp-side[data-side='right'] select.anb-cmp-agent")).to_have_value(
        "shop_v2"
    )
    expect(inspector.locator(".anb-cmp-side[data-side='right'] select.anb-cmp-turn")).to_have_value("1")
    why = inspector.locator(".anb-cmp-why li")
    expect(why).to_have_text(["the system prompt differs in: instructions"])
    expect(inspector.locator(".anb-cmp-effects li").first).to_have_text(
        "the model answered differently from call 1"
    )
    section = inspector.locator(".anb-cmp-section[data-source='instructions']")
    expect(section).to_have_class(re.compile("anb-cmp-changed"))
    expect(inspector.locator(".anb-cmp-lines .anb-cmp-changed .anb-cmp-right").first).to_contain_text(
        "Never add sweets."
    )
    expect(inspector.locator(".anb-cmp-state tr[data-key='items']")).to_have_class(
        re.compile("anb-cmp-changed")
    )
    expect(inspector.locator(".anb-cmp-state tr[data-key='api_key'] .anb-badge-hidden")).to_have_count(1)
    expect(inspector.locator(".anb-cmp-answers .anb-cmp-right")).to_have_text(
        "No sweets on this list: I did not add cake."
    )
    inspector.screenshot(path=str(ARTIFACTS / "debugger-compare.png"))
    # Another pair picked by hand: two turns of one agent.
    inspector.locator(".anb-cmp-side[data-side='right'] select.anb-cmp-agent").select_option("shop")
    inspector.locator(".anb-cmp-side[data-side='right'] select.anb-cmp-turn").select_option("2")
    expect(why.first).to_have_text("the user message differs")

    # The static record %agentnb diff left, as GitHub shows it.
    record = page.locator(".agentnb-compare")
    expect(record).to_have_count(1)
    expect(record.locator(".agentnb-compare-why")).to_contain_text(
        "the system prompt differs in: instructions"
    )
    record.scroll_into_view_if_needed()
    record.screenshot(path=str(ARTIFACTS / "debugger-diff-record.png"))
    assert log.dialogs == [], f"a dialog fired: {log.dialogs}"
    assert log.errors == [], log.errors
