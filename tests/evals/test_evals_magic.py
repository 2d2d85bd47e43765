"""``%agentnb eval`` through a real shell: one-line errors, the live view, the record, and a re-run that calls nothing."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from agentnb import slots
from agentnb.ipython.eval_view import EvalView, grid_html


@pytest.fixture()
def shell(shell):
    """The shared shell (tests/conftest.py) with a counting ``shop``, its ``cases`` and ``checks``."""
    shell.run_cell(
        "import evals_helpers\n"
        "from agentnb.evals import Case, check\n"
        "calls = []\n"
        "def counted(request):\n"
        "    calls.append(1)\n"
        "    return evals_helpers.follow(request)\n"
        "shop = evals_helpers.shop(model=evals_helpers.ScriptedModel(counted))\n"
        "cases = [Case('milk', id='m', expected='milk'), Case('<b>x</b>', id='h', expected='tea')]\n"
        "checks = [check.state('/items', contains=check.EXPECTED, name='stored')]\n"
    )
    return shell


def test_eval_runs_shows_progress_then_a_grid_and_returns_the_run(shell, tmp_path):
    with capture_output() as captured:
        run = shell.run_line_magic("agentnb", "eval shop cases --checks checks --name base --concurrency 2")
    assert run.rate() == 0.5 and (tmp_path / "notebook.agentnb" / "evals" / "base" / "cases.jsonl").exists()
    views = [o for o in captured.outputs if "evaluation base" in o.data.get("text/plain", "")]
    assert views, captured.outputs  # the live view was displayed, with a fixed text/plain
    html = grid_html(run, "failed")
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html  # the state's text is escaped
    assert "✗" in html and "lacks" in html and "<td>m</td>" not in html
    assert "<td>m</td>" in grid_html(run, "all") and "no errored case" in grid_html(run, "errored")
    calls = len(shell.user_ns["calls"])
    again = shell.run_line_magic("agentnb", "eval shop cases --checks checks --name base")
    assert all(r.replayed for r in again.rows) and again.text() == run.text()
    assert (
        len(shell.user_ns["calls"]) == calls + 4
    )  # a scripted model is Python: it answers again, exactly as recorded


def test_the_view_updates_its_line_and_filters():
    view = EvalView("x", 3)
    from agentnb.evals import Progress

    view.update(Progress("x", 3, done=2, running=1, passes=(("c", 1, 2),), limits=(("openai:m", 4, 1),)))
    assert (
        view.line.value.startswith("x: 2/3 done · 1 running")
        and "c 1/2" in view.line.value
        and "openai:m limit 4 (cut 1×)" in view.line.value
    )
    bundle = view._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["text/plain"] == "evaluation x"


@pytest.mark.parametrize(
    "line, message",
    [
        ("eval shop", "expected %agentnb eval NAME CASES"),
        ("eval nobody cases", "there is no agent named 'nobody'"),
        (
            "eval shop nothing",
            "'nothing' is neither a variable holding cases nor a .jsonl/.csv/.yaml file path",
        ),
        ("eval shop cases --checks nope", "--checks nope: there is no variable 'nope'"),
        ("eval shop cases --name ../x", "cannot name a folder"),
        ("eval shop cases --concurrency 0", "concurrency must be a whole number >= 1"),
        ("eval shop missing.jsonl", "no case file at 'missing.jsonl'"),
        ("list --checks checks", "belong to %agentnb eval"),
    ],
)
def test_bad_eval_lines_are_one_line_usage_errors(shell, line, message):
    with pytest.raises(UsageError) as caught:
        shell.run_line_magic("agentnb", line)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_case_opens_in_the_inspector_with_its_checks_and_a_flip_in_compare(shell):
    from agentnb.ipython import wire
    from agentnb.ipython.case_inspector import CaseInspector
    from agentnb.ipython.comparing import comparable_agents, comparison_message, default_pair
    from agentnb.ipython.eval_view import case_options

    with capture_output():
        base = shell.run_line_magic("agentnb", "eval shop cases --checks checks --name base")
    assert case_options(base, "failed") == [("h  ✗", ("h", 0))]
    view = EvalView("base", 2)
    view.close_run(base)
    view.filters.value = "failed"
    assert view.picker.options == (("h  ✗", ("h", 0)),)
    view.picker.value = ("h", 0)
    assert isinstance(view.open_case(), CaseInspector)  # the grid's "open in inspector"
    widget = base.inspect("h")
    assert isinstance(widget, CaseInspector)
    data = json.loads(widget.case_checks)
    assert (
        data["case"] == "h"
        and data["verdicts"][0]["status"] == "fail"
        and "lacks" in data["verdicts"][0]["reason"]
    )
    assert wire.TRAIT_CHECKS in widget.keys  # synced to the browser
    agent = widget.agent
    assert [t.content for t in agent.history] == [base.case("h").answer] and agent.session_state["items"] == [
        "<b>x</b>"
    ]
    # A fork whose edit flips the case: Compare opens on the two runs' turns of that case.
    shell.run_cell("strict = shop.fork('strict'); strict.instructions = 'Never add <b> tags.'")
    with capture_output():
        cand = shell.user_ns["strict"].evaluate(
            shell.user_ns["cases"],
            shell.user_ns["checks"],
            name="strict",
            folder=str(base.store.folder.parent.parent),
        )
        widget = cand.compare(base).inspect("h")
    agents = comparable_agents(widget.agent, [])
    left, right = default_pair(widget.agent, agents, None)
    assert left["agent"] == "base:h" and right["agent"] == "strict:h"
    message = comparison_message(agents, left, right)
    assert message[wire.KIND] == wire.COMPARISON and message["comparison"]


def test_showing_a_case_outside_the_notebook_says_what_to_do(tmp_path):
    from evals_helpers import shop

    from agentnb.errors import EvalCheckError
    from agentnb.evals import Case

    slots.case_inspector.clear()
    run = shop().evaluate([Case("milk", id="m")], name="outside", folder=tmp_path)
    with pytest.raises(EvalCheckError, match="needs the notebook: %load_ext agentnb"):
        run.inspect("m")
