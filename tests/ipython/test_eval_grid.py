"""An evaluation and a comparison in the notebook: the grids' HTML (cut reasons, coloured marks, a
box that scrolls under a sticky header, filters), the views around them (the tab a case opens on,
the final line's tokens, the static record), a comparison shown as its grid, and the static record
a kernel run without a front end saves."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from evals_helpers import shop  # noqa: E402

from agentnb.evals import Case, EvalRun, check  # noqa: E402
from agentnb.ipython import eval_grid, wire  # noqa: E402
from agentnb.ipython.case_inspector import CaseInspector  # noqa: E402
from agentnb.ipython.eval_view import (  # noqa: E402
    STATIC_EVAL_CLASS,
    ComparisonView,
    EvalView,
    final_line,
    static_record,
)
from agentnb.ipython.pytest_plugin import INSPECTOR_PATTERNS  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LONG = "the answer 'Done: added candy' claims the item was handled although the list does not hold it"


def long_reason(result: Any) -> None:
    assert result.case.input != "candy", LONG


def run_pair(folder: Path) -> tuple[EvalRun, EvalRun]:
    """Two runs of one agent over three cases (candy fails both checks), so nothing flips."""
    cases = [Case(item, id=f"T-{i}", expected=item) for i, item in enumerate(["milk", "candy", "<b>x</b>"])]
    checks = [check.state("/items", contains=check.EXPECTED, name="stored"), long_reason]
    base = shop().evaluate(cases, checks, name="base", folder=folder, display=False)
    return base, shop().evaluate(cases, checks, name="cand", folder=folder, display=False)


def no_candy(result: Any) -> None:
    assert "candy" not in result.state["items"], "candy was added"


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[EvalRun, EvalRun]:
    return run_pair(tmp_path)


def test_a_reason_is_cut_at_a_word_with_an_ellipsis():
    assert eval_grid.cut_words("short reason") == "short reason"
    cut = eval_grid.cut_words(LONG)
    assert cut.endswith("…") and len(cut) <= eval_grid.REASON_CUT
    assert LONG.startswith(cut[:-1]) and LONG[len(cut) - 1] == " "  # a whole word before the cut
    assert eval_grid.cut_words("x" * 100, 10) == "x" * 9 + "…"  # one long word: cut inside
    assert eval_grid.cut_words("a\nb   c") == "a b c"


def test_the_grid_marks_cuts_escapes_and_scrolls_in_its_own_box(runs):
    base, _ = runs
    html = eval_grid.grid_html(base)
    assert html.count("<tr data-case=") == 3
    # ✓ / ✗ carry their status as a class the style sheet colours from the theme
    assert 'class="anb-mark anb-mark-pass"' in html and 'class="anb-mark anb-mark-fail"' in html
    assert "--jp-success-color1" in html and "--jp-error-color1" in html
    # the box scrolls under a sticky header
    assert "max-height:24em;overflow:auto" in html and "position:sticky;top:0" in html
    # the long reason: cut at a word with an ellipsis, whole in the tooltip
    cell = re.search(r'<span title="([^"]*)">([^<]*)</span>', html.split('data-case="T-1"')[1])
    assert cell is not None
    whole, shown = cell.group(1).replace("&#x27;", "'"), cell.group(2).replace("&#x27;", "'")
    assert whole == LONG and shown == eval_grid.cut_words(LONG)
    # nothing from the state or the model is markup
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    failed = eval_grid.grid_html(base, "failed")
    assert failed.count("<tr data-case=") == 1 and 'data-case="T-1"' in failed
    assert "no errored case" in eval_grid.grid_html(base, "errored")
    assert eval_grid.case_options(base, "failed") == [("T-1  ✗ ✗", ("T-1", 0))]


def test_a_comparison_grid_pairs_the_cases_and_marks_the_flips(tmp_path):
    from evals_helpers import add_item, follow

    from agentnb import Agent, ScriptedModel

    cases = [Case(item, id=item, expected=item) for item in ["milk", "candy", "tea"]]
    checks = [check.state("/items", contains=check.EXPECTED, name="stored"), no_candy]
    lax = Agent("shop", model=ScriptedModel(follow), tools=[add_item], session_state={"items": []})
    base = lax.evaluate(cases, checks, name="base", folder=tmp_path, display=False)
    cand = shop().evaluate(
        cases, checks, name="cand", folder=tmp_path, display=False
    )  # its hook refuses candy
    cmp = cand.compare(base)
    # candy: "stored" pass→fail and "no_candy" fail→pass; every check together fails on both sides
    assert [eval_grid.flip_kind(cmp, pair) for pair in cmp.pairs] == [None, "flipped", None]
    html = eval_grid.comparison_grid_html(cmp)
    assert html.count("<tr data-case=") == 3 and html.count('class="anb-flipped"') == 1
    assert html.count('class="anb-flip"') == 2  # the two checks that flipped
    flipped = eval_grid.comparison_grid_html(cmp, "flipped")
    assert flipped.count("<tr data-case=") == 1 and 'data-case="candy"' in flipped
    assert "stored pass→fail: /items" in flipped and "no_candy fail→pass: candy was added" in flipped
    assert "no pass→fail case" in eval_grid.comparison_grid_html(cmp, "pass→fail")
    assert eval_grid.comparison_options(cmp, "flipped") == [("candy  flipped", ("candy", 0))]
    assert "<td>no_candy</td><td>67%</td><td>100%</td><td>0</td><td>1</td>" in eval_grid.summary_html(cmp)
    # scored on "stored" alone, candy went from passing every check to failing one
    stored = cand.rescore(checks[:1]).compare(base.rescore(checks[:1]))
    assert [eval_grid.flip_kind(stored, pair) for pair in stored.pairs] == [None, "pass→fail", None]
    assert eval_grid.comparison_options(stored, "pass→fail") == [("candy  pass→fail", ("candy", 0))]
    assert eval_grid.comparison_options(stored, "fail→pass") == []


def test_a_case_opens_on_checks_and_a_flipped_case_on_compare(runs):
    base, cand = runs
    view = EvalView("base", 3)
    view.close_run(base)
    assert view.picker.value == ("T-0", 0)  # the first case is picked: "open" needs no choice first
    view.filters.value = "failed"
    assert view.picker.value == ("T-1", 0)
    opened = view.open_case()
    assert isinstance(opened, CaseInspector) and opened.open_tab == "checks"
    assert wire.TRAIT_TAB in opened.keys  # synced: the front end opens on it
    cmp_view = ComparisonView(cand.compare(base))
    compared = cmp_view.open_case(("T-1", 0))
    assert compared.open_tab == "compare" and compared.agent.parent.name == "base:T-1"
    cmp_view.filters.value = "flipped"
    assert cmp_view.picker.options == ()  # nothing flipped between two runs of one agent


def test_the_static_record_is_the_runs_record_once_it_ended(runs):
    base, _ = runs
    view = EvalView("base", 3)
    before = view._repr_mimebundle_()
    assert before["text/plain"] == "evaluation base" and WIDGET_VIEW in before
    assert before["text/html"] == static_record("base", None)
    assert "it had not finished" in before["text/html"]
    view.close_run(base)
    after = view._repr_mimebundle_()
    assert after["text/plain"] == "evaluation base"  # fixed: nbval compares it
    html = after["text/html"]
    assert html.startswith(f'<div class="{STATIC_EVAL_CLASS} ') and base.html() in html
    assert "re-run the cell for the live grid" in html
    # nbval compares the display as "an evaluation", before and after its record came
    patterns = {re.compile(k): v for k, v in INSPECTOR_PATTERNS.items()}
    for text in (before["text/html"], html):
        assert [p.sub(v, text) for p, v in patterns.items() if p.search(text)] == ["<agentnb evaluation>"]


def test_the_final_line_counts_a_replayed_runs_tokens_as_its_record_does(tmp_path):
    cases = [Case("milk", id="m", expected="milk"), Case("tea", id="t", expected="tea")]
    shop().evaluate(cases, name="twice", folder=tmp_path, display=False)
    lines: list[Any] = []
    again = shop().evaluate(cases, name="twice", folder=tmp_path, display=False, on_progress=lines.append)
    assert all(r.replayed for r in again.rows)
    last = lines[-1]
    assert last.input_tokens + last.output_tokens == 0  # nothing spent now...
    tokens = sum(sum(r.tokens) for r in again.rows)
    assert tokens > 0
    line = final_line(last, again)
    # ...but the line says what the record says it cost, and that it was replayed
    assert f"{tokens:,} tokens (0 spent now: the rest replayed as recorded)" in line
    assert f"{tokens:,} tokens" in again.text().split("\n")[0]
    live = shop().evaluate(cases, name="live", folder=tmp_path, display=False, on_progress=lines.append)
    assert final_line(lines[-1], live).endswith(f"{sum(sum(r.tokens) for r in live.rows):,} tokens")


def test_a_cell_ending_with_a_comparison_shows_its_grid_and_keeps_its_record(shell, runs):
    base, cand = runs
    cmp = cand.compare(base)
    data, _ = shell.display_formatter.format(cmp)
    assert data[WIDGET_VIEW]["model_id"]
    assert data["text/plain"] == cmp.text() and data["text/html"] == cmp.html()


def test_a_kernel_without_a_front_end_saves_the_evaluations_record_in_its_display(tmp_path):
    from test_inspector_static import nbconvert_execute

    cells = [
        "%load_ext agentnb",
        f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from evals_helpers import shop\nfrom agentnb.evals import Case, check",
        "run = shop().evaluate([Case('milk', id='m', expected='milk'), Case('fail', id='f', expected='tea')],"
        " [check.state('/items', contains=check.EXPECTED, name='stored')], name='saved', folder='evals');",
    ]
    saved = nbconvert_execute(tmp_path, cells)
    (display,) = [o for o in saved["cells"][2]["outputs"] if o["output_type"] == "display_data"]
    assert "".join(display["data"]["text/plain"]) == "evaluation saved"
    html = "".join(display["data"]["text/html"])
    assert STATIC_EVAL_CLASS in html and "evaluation saved · 2 run(s) of 2 case(s) · 1 passed (50%)" in html
    assert "not passed (1)" in html and "it had not finished" not in html
    assert json.dumps(display["data"][WIDGET_VIEW])


def test_a_case_with_no_valid_output_is_under_failed_not_errored(tmp_path):
    from pydantic import BaseModel

    from agentnb import Agent, ScriptedModel, tool_call

    class Total(BaseModel):
        total: float

    def answer(request: Any) -> Any:
        if request.last_user_message == "broken":
            raise RuntimeError("the model broke")
        return tool_call("final_result", total=request.last_user_message)

    agent = Agent("t", ScriptedModel(answer), output_type=Total)
    cases = [Case("12.5", id="ok"), Case("lots", id="invalid"), Case("broken", id="crashed")]
    run = agent.evaluate(cases, [check.attempts(at_most=1)], folder=tmp_path, display=False)
    failed, errored = eval_grid.grid_html(run, "failed"), eval_grid.grid_html(run, "errored")
    assert re.findall(r'data-case="([^"]+)"', failed) == ["invalid"]
    assert re.findall(r'data-case="([^"]+)"', errored) == ["crashed"]
    assert "invalid: no answer matched the output type Total in 2 attempt(s)" in failed
