"""The inspector's run tree in a real JupyterLab (and the team views in Notebook 7 too), driven
through Debian's Chromium.

``teams_demo.ipynb`` defines team ▸ desk ▸ analyst (the analyst's tool goes through its own
hook) beside a researcher, and runs one team turn. From the team's inspector the test opens the
Runs tab, picks the grandchild (the analyst's run) and checks what every tab then shows: the
breadcrumb, its prompt as sent with the part the team added labelled by what produced it, its
request, its tool call with the hook chain, its state, and the ledger of the desk's delegation.
A second team turn is then started straight on the kernel with a researcher whose model streams
its answer and holds its end until the test lets it go: while it is held, the researcher's text
is already in its node of the Runs tab (as text, never markup).

``handoff_demo.ipynb`` runs two delegations of one response that change the same path (the second
merge is refused) and a handoff that leaves billing in charge of triage. The test reads who is in
charge and the turn routed to billing (billing's prompt and tokens, not triage's); a member run's
own header and message line once it is picked; the refused merge marked in the run tree; the swim
lanes on one time axis (the tracks start at one x, the bars placed by their times) with a legend;
and, after a save and a reload, the static view saying who is in charge and what to do.
Screenshots land in ``test-artifacts/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from labserver import ARTIFACTS, SAVE_JS, THEME_JS, LabServer, NewPage, open_notebook, run_all, run_all_cells

pytestmark = pytest.mark.browser

NOTEBOOK = Path(__file__).with_name("teams_demo.ipynb")
CODE_CELLS = 7
HANDOFF = Path(__file__).with_name("handoff_demo.ipynb")
HANDOFF_CELLS = 10

# Where each lane's track starts, and each bar's place in its track (as drawn, and as its style says).
LANES_JS = """(root) => [...root.querySelectorAll('.anb-lanes:not(.anb-lanes-live) .anb-lane')].map((lane) => {
  const track = lane.querySelector('.anb-lane-track').getBoundingClientRect();
  const text = document.createRange();
  text.selectNodeContents(lane.querySelector('.anb-lane-name'));
  return {
    agent: lane.getAttribute('data-agent'), nameWidth: text.getBoundingClientRect().width, x: track.x, width: track.width,
    bars: [...lane.querySelectorAll('.anb-bar')].map((bar) => {
      const box = bar.getBoundingClientRect();
      return { x: box.x, right: box.right, left: parseFloat(bar.style.left), colour: getComputedStyle(bar).backgroundColor, kind: bar.className };
    }),
  };
})"""

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


def test_from_the_team_cell_to_a_grandchild_run(lab_server: LabServer, new_page: NewPage) -> None:
    from playwright.sync_api import expect

    port, work = lab_server(NOTEBOOK, "teams.ipynb")
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page(height=1100)
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
    expect(lanes.nth(0).locator(".anb-run-text")).to_have_text("The tide comes <b>in</b> twice a day.")
    expect(lanes.nth(1)).to_have_attribute("data-agent", "desk")
    expect(inspector.locator(".anb-runs-live b")).to_have_count(0)  # a model's text is never markup
    expect(inspector).to_have_attribute("data-status", "running")  # still held: it streamed live
    inspector.screenshot(path=str(ARTIFACTS / "teams-member-streaming.png"))
    (work / "release-member").write_text("")
    expect(inspector).to_have_attribute("data-status", "ok", timeout=30_000)
    expect(inspector.locator(".anb-run-node")).to_have_count(3)  # the finished tree: team, researcher, desk
    expect(inspector.locator(".anb-lane")).to_have_count(2)
    assert not log.page_errors, log.page_errors


def _tokens(text: str) -> int:
    found = re.search(r"(\d[\d,]*) tok", text)
    assert found, text
    return int(found.group(1).replace(",", ""))


def _check_routed(page, triage, ui: str) -> None:
    """Who is in charge, and a turn routed to billing shown as billing's run."""
    from playwright.sync_api import expect

    tab = lambda name: triage.locator(f"[role=tab][data-tab='{name}']")  # noqa: E731
    expect(triage.locator(".anb-pos")).to_have_text("turn 2 of 2", timeout=30_000)
    triage.scroll_into_view_if_needed()  # drawn (Lab leaves cells out of sight unrendered)
    expect(triage.locator(".anb-in-charge")).to_have_text("in charge: billing")
    expect(triage.locator(".anb-routed")).to_have_text("→ routed to billing")
    expect(triage.locator(".anb-scope")).to_have_text("▸ triage ▸ billing (its turn 2)", timeout=30_000)
    # billing's tokens, not triage's "0 tok" (an expectation, which waits out the header's redraws)
    expect(triage.locator(".anb-tokens")).to_have_text(re.compile(r"^≈[1-9][\d,]* tok used$"))
    panel = triage.locator(".anb-panel")
    expect(panel).to_contain_text("You handle invoices.")  # billing's prompt
    expect(panel).not_to_contain_text("Send invoice questions to billing.")
    tab("tools").click()
    expect(panel).to_contain_text("No tool calls in this turn.")  # no transfer the model never made
    tab("runs").click()
    expect(triage.locator(".anb-run-node[data-path='triage/billing']")).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(triage.locator(".anb-run-node[data-path='triage']")).to_contain_text(
        "routed: no model call of its own"
    )
    triage.screenshot(path=str(ARTIFACTS / f"teams-{ui}-routed.png"))
    # The turn before: triage's own model call handed over; billing in charge since.
    triage.locator("button.anb-prev").click()
    expect(triage.locator(".anb-pos")).to_have_text("turn 1 of 2")
    expect(triage.locator(".anb-routed")).to_be_hidden()
    expect(triage.locator(".anb-in-charge")).to_have_text("in charge: billing")
    tab("prompt").click()
    expect(panel).to_contain_text("Send invoice questions to billing.")
    tab("tools").click()
    expect(triage.locator(".anb-tool[data-tool='transfer_to_billing']")).to_have_count(1)
    triage.locator("button.anb-next").click()
    expect(triage.locator(".anb-routed")).to_have_text("→ routed to billing")
    tab("prompt").click()
    expect(panel).to_contain_text("You handle invoices.", timeout=30_000)


def _check_tree_and_lanes(page, pair, ui: str) -> None:
    """The refused merge in the tree, the lanes on one axis, a member's own header."""
    from playwright.sync_api import expect

    pair.scroll_into_view_if_needed()
    pair.locator("[role=tab][data-tab='runs']").click()
    refused = pair.locator(".anb-run-node[data-path='pair/b']")
    expect(refused).to_have_attribute("data-status", "refused")
    expect(refused.locator(".anb-run-mark")).to_have_text("⚠")
    expect(refused).to_contain_text("merge refused")
    assert "both changed /notes/0" in (refused.get_attribute("title") or "")
    fine = pair.locator(".anb-run-node[data-path='pair/a']")
    expect(fine.locator(".anb-run-mark")).to_have_text("✓")
    backgrounds = [n.evaluate("(el) => getComputedStyle(el).backgroundColor") for n in (refused, fine)]
    assert backgrounds[0] != backgrounds[1], backgrounds  # styled as a warning

    lanes = pair.evaluate(LANES_JS)
    assert [lane["agent"] for lane in lanes] == ["a", "b"], lanes
    assert lanes[1]["nameWidth"] > lanes[0]["nameWidth"] + 40  # "2. b ⚠ merge refused" is longer...
    assert abs(lanes[0]["x"] - lanes[1]["x"]) <= 1, lanes  # ...and both tracks start at one x
    assert abs(lanes[0]["width"] - lanes[1]["width"]) <= 1, lanes
    for lane in lanes:
        assert lane["bars"], lane
        for bar in lane["bars"]:
            # each bar where its time puts it on the shared axis
            assert abs(bar["x"] - (lane["x"] + lane["width"] * bar["left"] / 100)) <= 1.5, (lane, bar)
            assert lane["x"] - 1 <= bar["x"] and bar["right"] <= lane["x"] + lane["width"] + 3, (lane, bar)
    legend = pair.locator(".anb-lanes-legend")
    expect(legend).to_contain_text("model call")
    expect(legend).to_contain_text("tool call")
    swatches = {
        kind: pair.locator(f".anb-swatch-{kind}").evaluate("(el) => getComputedStyle(el).backgroundColor")
        for kind in ("model", "tool")
    }
    bars = {bar["kind"].split("anb-bar-")[1]: bar["colour"] for lane in lanes for bar in lane["bars"]}
    assert bars == swatches, (bars, swatches)
    pair.screenshot(path=str(ARTIFACTS / f"teams-{ui}-refused-lanes.png"))

    # A member picked: the header and the message line are its own; the lanes stay, it marked.
    node_time = re.search(r"run ([\d.]+ m?s)", refused.inner_text())
    assert node_time, refused.inner_text()
    refused.click()
    expect(pair.locator(".anb-scope")).to_have_text("▸ pair ▸ b (its turn 1)", timeout=30_000)
    expect(pair.locator(".anb-message")).to_have_text("» note the tides, with their cause")
    expect(pair.locator(".anb-answer .anb-text")).to_have_text("b done")
    expect(pair.locator(".anb-status")).to_have_text(f"✓ done {node_time.group(1)}")
    assert _tokens(pair.locator(".anb-tokens").inner_text()) == _tokens(refused.inner_text())
    expect(pair.locator(".anb-lane-selected")).to_have_attribute("data-agent", "b")
    pair.screenshot(path=str(ARTIFACTS / f"teams-{ui}-member-header.png"))
    pair.locator(".anb-run-node[data-path='pair']").click()
    expect(pair.locator(".anb-message")).to_have_text("» Both of you, write a note.")
    expect(pair.locator(".anb-scope")).to_have_text("")


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_who_is_in_charge_a_member_header_a_refused_merge_and_the_lanes(
    lab_server: LabServer, new_page: NewPage, ui: str
) -> None:
    from playwright.sync_api import expect

    if ui == "notebook":
        pytest.importorskip("notebook", reason="Notebook 7 is not installed (pip install notebook)")
    port, work = lab_server(HANDOFF, "handoff.ipynb", ui=ui)
    ARTIFACTS.mkdir(exist_ok=True)
    page, log = new_page(height=1100)
    run_all(page, port, ui, "handoff.ipynb", HANDOFF_CELLS)
    triage = page.locator(".anb-root[data-agent='triage']")
    _check_routed(page, triage, ui)
    pair = page.locator(".anb-root[data-agent='pair']")
    _check_tree_and_lanes(page, pair, ui)
    page.evaluate(THEME_JS, "JupyterLab Dark")
    page.wait_for_timeout(500)
    pair.locator(".anb-run-node[data-path='pair/b']").click()
    triage.screenshot(path=str(ARTIFACTS / f"teams-{ui}-routed-dark.png"))
    pair.screenshot(path=str(ARTIFACTS / f"teams-{ui}-refused-dark.png"))
    page.evaluate(THEME_JS, "JupyterLab Light")

    # Saved and reloaded (the kernel still up): the static view says who is in charge,
    # where the last turn went, and what to do for a live inspector.
    page.evaluate(SAVE_JS)
    page.evaluate(SAVE_JS)
    open_notebook(page, port, ui, "handoff.ipynb")
    static = page.locator(".agentnb-static-inspector", has_text="triage · inspector")
    expect(static).to_be_visible(timeout=30_000)
    expect(static).to_contain_text("in charge: billing")
    expect(static).to_contain_text("turn 2 · ok · routed to billing")
    expect(static).to_contain_text("re-run this cell for the live inspector")
    static.screenshot(path=str(ARTIFACTS / f"teams-{ui}-static.png"))
    assert not [e for e in log.page_errors if "agentnb/static/" in e], log.page_errors
