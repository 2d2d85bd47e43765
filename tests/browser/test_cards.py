"""Pausing a turn from the inspector, and typed output's attempts, in a real JupyterLab and a real
Notebook 7 (Debian's Chromium, Python playwright).

``approvals_demo.ipynb`` (agentnb's offline ScriptedModel) pauses a payment agent's turn on two
charges that need approval, a helper's turn on its question to the user, and runs a typed agent
whose first answer does not fit its schema, and stops an agent before its model call; a last cell shows the payment agent's inspector a
second time. The test decides from the cards: one charge approved as it is, the other with
arguments edited (the schema refuses a text amount as it is typed, then takes a number), and
checks the tool's effect in the kernel and the model's next message; a third charge rejected with
a reason the model then reads; the question answered; two views deciding the same item at once
(the second is told it was decided already); History marking the turns paused and resumed; the
Output tab's two attempts, the error's path marked on the failed answer and the message sent back;
the Request tab's schema and mode; a breakpoint's request edited and approved, the edit being what
the model received; and, with the kernel shut down, the card saying how to decide
from a cell, its buttons disabled. Screenshots land in ``test-artifacts/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from labserver import ARTIFACTS, EXECUTE_JS, SHUTDOWN_JS, THEME_JS, LabServer, NewPage, run_all, show_tab

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).with_name("approvals_demo.ipynb")
CODE_CELLS = 11
# Both views of one agent click the same button in one go: each sends its decision before either
# hears back, as two tabs deciding at the same moment would.
CLICK_BOTH_JS = """([agent, item, button]) => {
  const views = [...document.querySelectorAll(`.anb-root[data-agent='${agent}']`)];
  for (const view of views) view.querySelector(`.anb-card[data-item='${item}'] button.${button}`).click();
  return views.length;
}"""


def _kernel(page, code: str) -> None:
    assert page.evaluate(EXECUTE_JS, code) == "ok", code


def _check_approve_and_edit(page, pay, ui: str) -> None:
    """Two charges wait: one approved as it is, the other with arguments edited, checked against
    the tool's schema as they are typed; the turn then goes on, followed live."""
    from playwright.sync_api import expect

    cards = pay.locator(".anb-card")
    expect(cards).to_have_count(2, timeout=30_000)
    expect(pay.locator(".anb-status")).to_have_text("‖ paused: waits for a person (2)")
    expect(pay.locator(".anb-cards-head")).to_have_text("‖ This turn waits for you: 2 of 2 item(s) to decide")
    bob, ann = cards.nth(0), cards.nth(1)
    expect(bob.locator(".anb-card-call")).to_have_text('charge({"customer":"bob","amount":250})')
    expect(bob.locator(".anb-card-reason")).to_contain_text("charge requires approval")
    bob.locator(".anb-card-state > summary").click()
    expect(bob.locator(".anb-card-state pre")).to_have_text('{\n  "charged": []\n}')
    bob.locator(".anb-card-prompt > summary").click()
    expect(bob.locator(".anb-card-prompt")).to_contain_text("user: bob 250 ann 40")
    pay.screenshot(path=str(ARTIFACTS / f"cards-{ui}-paused.png"))
    bob.locator(".anb-card-state > summary").click()
    bob.locator(".anb-card-prompt > summary").click()

    bob.locator("button.anb-card-approve").click()
    expect(bob.locator(".anb-card-decided")).to_have_text(
        "✓ approved by person — 1 other item(s) still wait for a decision", timeout=20_000
    )
    expect(pay.locator(".anb-cards-head")).to_have_text("‖ This turn waits for you: 1 of 2 item(s) to decide")
    _kernel(page, "assert pay.is_paused and pay.session_state == {'charged': []}")  # nothing ran yet

    ann.locator("button.anb-card-edit").click()
    editor = ann.locator("textarea.anb-edit-text")
    expect(editor).to_have_value('{\n  "customer": "ann",\n  "amount": 40\n}')
    check = ann.locator(".anb-card-check")
    expect(check).to_have_text("✓ fits the schema of charge", timeout=20_000)
    editor.fill('{"customer": "ann", "amount": "thirty"}')
    expect(check).to_have_text(
        re.compile(r"do not fit the tool's schema: amount: must be integer"), timeout=20_000
    )
    expect(check).to_have_class(re.compile(r"\banb-bad\b"))
    pay.screenshot(path=str(ARTIFACTS / f"cards-{ui}-edit-refused.png"))
    editor.fill('{"customer": "ann", "amount": 30}')
    expect(check).to_have_text("✓ fits the schema of charge", timeout=20_000)
    editor.press("Control+Enter")

    # Both decided: the turn went on in the kernel, and the view followed it.
    expect(pay.locator(".anb-card")).to_have_count(0, timeout=30_000)
    expect(pay.locator(".anb-status")).to_have_text(re.compile(r"^✓ done"), timeout=30_000)
    expect(pay.locator(".anb-answer .anb-text")).to_have_text("Done: charged bob 250; charged ann 30")
    _kernel(page, "assert pay.session_state == {'charged': [['bob', 250], ['ann', 30]]}, pay.session_state")
    _kernel(
        page,
        "assert [c.decision for c in pay.history[0].tool_calls] == ['approved', 'edited']\n"
        "assert len(pay.history) == 1 and pay.history[0].status == 'ok'",
    )


def _check_reject(page, pay, ui: str) -> None:
    """A new turn pauses on one charge; rejected with a reason, which the model reads."""
    from playwright.sync_api import expect

    _kernel(page, "pay.run('carl 99')")
    card = pay.locator(".anb-card")
    expect(card).to_have_count(1, timeout=30_000)
    expect(card.locator(".anb-card-call")).to_have_text('charge({"customer":"carl","amount":99})')
    card.locator("button.anb-card-reject").click()
    card.locator("button.anb-card-reject-send").click()
    expect(card.locator(".anb-edit-error")).to_have_text("write why: the model reads it")
    reason = card.locator("input.anb-card-reason-input")
    reason.fill("carl paid in cash")
    pay.screenshot(path=str(ARTIFACTS / f"cards-{ui}-reject.png"))
    page.evaluate(THEME_JS, "JupyterLab Dark")
    page.wait_for_timeout(300)
    pay.screenshot(path=str(ARTIFACTS / f"cards-{ui}-reject-dark.png"))
    page.evaluate(THEME_JS, "JupyterLab Light")
    reason.press("Enter")
    expect(pay.locator(".anb-card")).to_have_count(0, timeout=30_000)
    expect(pay.locator(".anb-answer .anb-text")).to_have_text(
        "Done: charged ann 30; Rejected by the person: carl paid in cash", timeout=30_000
    )
    _kernel(page, "assert pay.session_state == {'charged': [['bob', 250], ['ann', 30]]}")


def _check_twice(page, pay, ui: str) -> None:
    """Two views decide the same item at once: the second is told it was decided already."""
    from playwright.sync_api import expect

    _kernel(page, "pay.run('dan 5 eve 6')")
    both = page.locator(".anb-root[data-agent='pay']")
    expect(both).to_have_count(2)
    for view in (both.nth(0), both.nth(1)):
        expect(view.locator(".anb-card")).to_have_count(2, timeout=30_000)
    dan = pay.locator(".anb-card").first.get_attribute("data-item")
    assert page.evaluate(CLICK_BOTH_JS, ["pay", dan, "anb-card-approve"]) == 2
    errors = page.locator(f".anb-root[data-agent='pay'] .anb-card[data-item='{dan}'] .anb-card-error")
    expect(errors).to_have_count(1, timeout=20_000)
    expect(errors).to_have_text(
        f"pending item {dan} (approval: charge) was already approved by person, in another view or in Python: "
        "a decision is taken once"
    )
    for view in (both.nth(0), both.nth(1)):
        expect(view.locator(f".anb-card[data-item='{dan}'] .anb-card-decided")).to_contain_text("approved")
    page.locator(".anb-card-error").first.scroll_into_view_if_needed()
    both.nth(1).screenshot(path=str(ARTIFACTS / f"cards-{ui}-decided-twice.png"))


def _check_history(pay, ui: str) -> None:
    """History: the turns that went on are marked resumed, the one waiting paused."""
    from playwright.sync_api import expect

    show_tab(pay, "history")
    expect(pay.locator("tr[data-turn='0'] [data-pause]")).to_have_text("resumed")
    expect(pay.locator("tr[data-turn='1'] [data-pause]")).to_have_text("resumed")
    expect(pay.locator("tr[data-turn='2'] [data-pause]")).to_have_text("‖ paused")
    pay.screenshot(path=str(ARTIFACTS / f"cards-{ui}-history.png"))
    show_tab(pay, "prompt")


def _check_question(page, helper, ui: str) -> None:
    """The model's question, shown as text, answered from the card."""
    from playwright.sync_api import expect

    card = helper.locator(".anb-card")
    expect(card).to_have_count(1, timeout=30_000)
    expect(card.locator(".anb-card-asks")).to_have_text("Which city should I book? <b>not markup</b>")
    assert card.locator(".anb-card-asks b").count() == 0  # text, never markup
    card.locator("textarea.anb-card-answer-input").fill("Lisbon")
    helper.screenshot(path=str(ARTIFACTS / f"cards-{ui}-question.png"))
    card.locator("button.anb-card-answer").click()
    expect(helper.locator(".anb-card")).to_have_count(0, timeout=30_000)
    expect(helper.locator(".anb-answer .anb-text")).to_have_text("Booked a trip to Lisbon.", timeout=30_000)


def _check_output(invoices, ui: str) -> None:
    """A typed turn whose first answer failed: both attempts, the error's path marked on the
    answer, the message sent back, the typed output as a tree; the Request tab's schema."""
    from playwright.sync_api import expect

    tab = invoices.locator("[role=tab][data-tab='output']")
    expect(tab).to_have_text("Output (2)", timeout=30_000)
    show_tab(invoices, "output")
    expect(invoices.locator(".anb-out-title")).to_have_text("Invoice · tool mode · 2 attempts (1 failed)")
    attempts = invoices.locator(".anb-out-attempt")
    expect(attempts).to_have_count(2)
    first, second = attempts.nth(0), attempts.nth(1)
    expect(first).to_have_class(re.compile(r"\banb-out-failed\b"))
    bad = first.locator(".anb-out-bad[data-path='/total']")
    expect(bad.first).to_be_visible()
    assert "forty" in "".join(bad.all_inner_texts()), bad.all_inner_texts()
    expect(first.locator(".anb-out-note")).to_contain_text("Input should be a valid integer")
    expect(first.locator(".anb-out-errors li[data-path='/total']")).to_contain_text("/total")
    expect(first.locator(".anb-out-retry pre")).to_contain_text(
        "Your answer does not match the required output:\n- /total: Input should be a valid integer",
        timeout=20_000,
    )
    expect(second).to_have_class(re.compile(r"\banb-out-ok\b"))
    expect(second.locator(".anb-out-typed .anb-leaf")).to_have_text(['customer: "ann"', "total: 40"])
    expect(invoices.locator(".anb-out-schema > summary").first).to_have_text(
        "output schema · from the parameters of tool final_result"
    )
    invoices.screenshot(path=str(ARTIFACTS / f"output-{ui}-attempts.png"))

    show_tab(invoices, "request")
    expect(invoices.locator(".anb-out-asked .anb-label").first).to_have_text(
        "typed output: Invoice · tool mode · 2 attempts (1 failed)"
    )
    invoices.locator(".anb-out-asked .anb-out-schema > summary").click()
    expect(invoices.locator(".anb-out-asked .anb-json")).to_contain_text('"required": [')
    invoices.screenshot(path=str(ARTIFACTS / f"output-{ui}-request.png"))


def _check_breakpoint(stepper, ui: str) -> None:
    """Stopped before its model call: the card shows the request about to go; edited and
    approved, the edited request is what the model answers."""
    from playwright.sync_api import expect

    card = stepper.locator(".anb-card")
    expect(card).to_have_count(1, timeout=30_000)
    expect(card.locator(".anb-card-call")).to_have_text("model call 1")
    expect(card.locator(".anb-card-request")).to_contain_text("user: hello")
    expect(card.locator("button.anb-card-reject")).to_have_count(0)  # a model call is not rejected
    card.locator("button.anb-card-edit").click()
    editor = card.locator("textarea.anb-edit-text")
    text = editor.input_value()
    assert '"content": "hello"' in text, text
    editor.fill(text.replace('"content": "hello"', '"content": "hello from the card"'))
    stepper.screenshot(path=str(ARTIFACTS / f"cards-{ui}-breakpoint.png"))
    card.locator("button.anb-edit-apply").click()
    expect(stepper.locator(".anb-card")).to_have_count(0, timeout=30_000)
    expect(stepper.locator(".anb-answer .anb-text")).to_have_text(
        "You said: hello from the card", timeout=30_000
    )


def _check_gone(page, pay, ui: str) -> None:
    """The kernel shut down: the card says so and how to decide from a cell; nothing to click."""
    from playwright.sync_api import expect

    page.evaluate(SHUTDOWN_JS)
    expect(pay).to_have_attribute("data-connected", "false", timeout=20_000)
    card = pay.locator(".anb-card:not(.anb-card-done)")
    expect(card).to_have_count(1)
    item = card.get_attribute("data-item")
    expect(card.locator(".anb-card-gone")).to_have_text(
        "The kernel that paused this turn is gone: re-run the %%agent cell (and %agentnb resume pay) to "
        f"reload the session, then decide with %agentnb approve pay {item} (or %agentnb reject pay {item} "
        "--reason WHY), then %agentnb continue pay."
    )
    for button in card.locator("button").all():
        expect(button).to_be_disabled()
    pay.screenshot(path=str(ARTIFACTS / f"cards-{ui}-kernel-gone.png"))


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_pending_cards_and_typed_output(lab_server: LabServer, new_page: NewPage, ui: str) -> None:
    if ui == "notebook":
        pytest.importorskip("notebook", reason="Notebook 7 is not installed (pip install notebook)")
    port, _work = lab_server(NOTEBOOK, "approvals.ipynb", ui=ui)
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page(height=1100)
    run_all(page, port, ui, "approvals.ipynb", CODE_CELLS, timeout=120_000)
    pay = page.locator(".anb-root[data-agent='pay']").first
    _check_approve_and_edit(page, pay, ui)
    _check_reject(page, pay, ui)
    _check_question(page, page.locator(".anb-root[data-agent='helper']"), ui)
    _check_output(page.locator(".anb-root[data-agent='invoices']"), ui)
    _check_breakpoint(page.locator(".anb-root[data-agent='stepper']"), ui)
    _check_twice(page, pay, ui)
    _check_history(pay, ui)
    _check_gone(page, pay, ui)
    ours = [e for e in log.page_errors if "agentnb/static/" in e or "inspector" in e]
    assert not ours, "\n\n".join(ours)
