"""The inspector's run tree in a real JupyterLab, driven through Debian's Chromium.

``teams_demo.ipynb`` defines team ▸ desk ▸ analyst (the analyst's tool goes through its own
hook) beside a researcher, and runs one team turn. From the team's inspector the test opens the
Runs tab, picks the grandchild (the analyst's run) and checks what every tab then shows: the
breadcrumb, its prompt as sent with the part the team added labelled by what produced it, its
request, its tool call with the hook chain, its state, and the ledger of the desk's delegation.
A second team turn is then started straight on the kernel with a researcher whose model streams
its answer and holds its end until the test lets it go: while it is held, the researcher's text
is already in its node of the Runs tab (as text, never markup). Screenshots land in
``test-artifacts/``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from labserver import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, lab_server, run_all_cells  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).with_name("teams_demo.ipynb")
CODE_CELLS = 7

# Starts code on the kernel without waiting for it to finish.
START_JS = """(code) => { window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.requestExecute({ code }); return true; }"""

# A second team turn delegating to the researcher and the desk side by side; the researcher
# streams its answer, then holds its end until the test writes "release-member" beside the
# notebook (or two minutes pass).
HELD_TURN = """
import pathlib, time
from agentnb import ScriptedModel, tool_call

class HeldStream(ScriptedModel):
    def stream(self, request):
        for item in super().stream(request):
            if not isinstance(item, str):
                deadline = time.monotonic() + 120
                while not pathlib.Path("release-member").exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
            yield item

researcher.model = HeldStream(["The tide comes <b>in</b> twice a day."])
desk_model.add("Filed under tides.")
team_model.add([tool_call("delegate_task_to_member", member_id="researcher", task="how often?"),
                tool_call("delegate_task_to_member", member_id="desk", task="file it")], "Twice a day.")
team.run("How often do tides come in?")
"""


def test_from_the_team_cell_to_a_grandchild_run(lab_server: Callable[..., tuple[int, Path]]) -> None:
    from playwright.sync_api import expect, sync_playwright

    port, work = lab_server(NOTEBOOK, "teams.ipynb")
    ARTIFACTS.mkdir(exist_ok=True)
    console_errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.on("pageerror", lambda exc: console_errors.append(f"page error: {exc}"))
            outputs = run_all_cells(page, port, "teams.ipynb", CODE_CELLS)
            assert "▸ team ▸ desk ▸ analyst · task: 'note the cause of tides'" in "\n".join(outputs)

            inspector = page.locator(".anb-root[data-agent='team']")
            expect(inspector).to_have_count(1, timeout=30_000)
            expect(inspector.locator(".anb-pos")).to_have_text("turn 1 of 1", timeout=30_000)
            tab = lambda name: inspector.locator(f"[role=tab][data-tab='{name}']")  # noqa: E731

            # Runs: the tree, each node with its tokens; one click to the grandchild.
            tab("runs").click()
            expect(tab("runs")).to_have_text("Runs (4)")
            nodes = inspector.locator(".anb-run-node")
            expect(nodes).to_have_count(4)
            expect(nodes.nth(0)).to_contain_text("team · ")
            expect(nodes.nth(2)).to_contain_text("team ▸ desk · file a note on tides")
            expect(nodes.nth(2)).to_contain_text("own /")
            inspector.locator(".anb-run-node[data-path='team/desk/analyst']").click()
            expect(inspector.locator(".anb-scope")).to_have_text(
                "▸ team ▸ desk ▸ analyst (its turn 1)", timeout=30_000
            )
            sections = inspector.locator(".anb-run-section")
            expect(sections).to_have_count(2)
            expect(sections.nth(0)).to_contain_text("system · instructions")
            expect(sections.nth(0)).to_contain_text("You keep the notes. They are: []")
            expect(sections.nth(1)).to_contain_text("user · task (delegate_task_to_member)")
            inspector.screenshot(path=str(ARTIFACTS / "teams-runs.png"))

            # Every tab now shows the analyst's run.
            tab("prompt").click()
            expect(inspector.locator(".anb-panel")).to_contain_text("You keep the notes. They are: []")
            # what the desk added to the analyst's message, labelled, with its tokens (the estimate: 23 characters)
            added = inspector.locator(".anb-added-part[data-source='task (delegate_task_to_member)']")
            expect(added).to_contain_text("note the cause of tides")
            expect(added.locator(".anb-section-tokens")).to_have_text("≈5 tok")
            tab("request").click()
            expect(inspector.locator(".anb-panel")).to_contain_text("note the cause of tides")
            tab("tools").click()
            tool = inspector.locator(".anb-tool[data-tool='add_note']")
            expect(tool).to_have_count(1)
            tool.locator("summary").click()
            expect(tool.locator(".anb-hook[data-hook='audit'] .anb-hook-outcome")).to_have_text("passed on")
            tab("state").click()
            panel = inspector.locator(".anb-panel")
            expect(panel).to_contain_text("notes [1]")
            expect(panel).not_to_contain_text("no changes in this turn")
            inspector.screenshot(path=str(ARTIFACTS / "teams-grandchild-tools.png"))

            # The desk's delegation, seen from the team: what went down and what came up, with the chain.
            tab("runs").click()
            inspector.locator(".anb-run-node[data-path='team/desk']").click()
            up = inspector.locator(".anb-ledger-up")
            expect(up).to_contain_text("add /notes/0")
            expect(up).to_contain_text("team ▸ desk ▸ analyst ▸ tool:add_note")
            expect(up).to_contain_text("team ▸ desk ▸ analyst ▸ hook:audit")
            expect(inspector.locator(".anb-ledger-down")).to_contain_text("notes = []")
            # the team's own run: the swim lanes of its two delegations, in merge order
            inspector.locator(".anb-run-node[data-path='team']").click()
            expect(inspector.locator(".anb-scope")).to_have_text("")
            lanes = inspector.locator(".anb-lane")
            expect(lanes).to_have_count(2)
            expect(lanes.nth(0)).to_contain_text("1. researcher")
            expect(lanes.nth(1)).to_contain_text("2. desk")
            inspector.screenshot(path=str(ARTIFACTS / "teams-lanes.png"))

            # A member's text streams into its own node while the team turn runs.
            assert page.evaluate(START_JS, HELD_TURN)
            expect(inspector.locator(".anb-pos")).to_have_text("turn 2 of 2", timeout=30_000)
            expect(inspector).to_have_attribute("data-status", "running")
            tab("runs").click()
            node = inspector.locator(".anb-runs-live .anb-run-node[data-path='team/researcher']")
            expect(node.locator(".anb-run-text")).to_have_text(
                "The tide comes <b>in</b> twice a day.", timeout=30_000
            )
            expect(node).to_contain_text("running")
            # the two delegations of one response, side by side: the researcher's lane has its text too
            lanes = inspector.locator(".anb-lanes-live .anb-lane")
            expect(lanes).to_have_count(2)
            expect(lanes.nth(0)).to_have_attribute("data-agent", "researcher")
            expect(lanes.nth(0).locator(".anb-run-text")).to_have_text(
                "The tide comes <b>in</b> twice a day."
            )
            expect(lanes.nth(1)).to_have_attribute("data-agent", "desk")
            expect(inspector.locator(".anb-runs-live b")).to_have_count(0)  # a model's text is never markup
            expect(inspector).to_have_attribute("data-status", "running")  # still held: it streamed live
            inspector.screenshot(path=str(ARTIFACTS / "teams-member-streaming.png"))
            (work / "release-member").write_text("")
            expect(inspector).to_have_attribute("data-status", "ok", timeout=30_000)
            expect(inspector.locator(".anb-run-node")).to_have_count(
                3
            )  # the finished tree: team, researcher, desk
            expect(inspector.locator(".anb-lane")).to_have_count(2)
            assert not console_errors, console_errors
        finally:
            browser.close()
