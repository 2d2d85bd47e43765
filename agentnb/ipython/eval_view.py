"""An evaluation in the notebook: a live progress line while it runs, then a results grid.

The grid is a row per (case, repeat) with ✓ / ✗ / ! per check and the reason beside it, and
filters for failed, errored and flaky cases (a case whose repeats disagree). Everything in it is
computed here in Python and escaped: nothing from a model, a tool or the state becomes markup.
The widget's text/plain is fixed (nbval compares it); the run's static record is the cell's
own output (``EvalRun``'s text/HTML).
"""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from ..evals import EvalRun, Progress
from ..evals import runner

FILTERS = ("all", "failed", "errored", "flaky")
MARK = {"pass": "✓", "fail": "✗", "error": "!"}


def grid_html(run: EvalRun, show: str = "all") -> str:
    """The results grid as escaped HTML, filtered (all, failed, errored, flaky)."""
    outcomes: dict[str, set[Any]] = {}
    for row in run.rows:
        outcomes.setdefault(row.case.id, set()).add(row.passed)
    keep = {
        "all": lambda r: True,
        "failed": lambda r: r.status == "ok" and r.passed is not True,
        "errored": lambda r: r.status != "ok",
        "flaky": lambda r: len(outcomes[r.case.id]) > 1,
    }[show]
    head = "".join(f"<th>{escape(c)}</th>" for c in ["case", "repeat", "status", *run.check_names])
    body = []
    for row in (r for r in run.rows if keep(r)):
        cells = [escape(row.case.id), str(row.repeat + 1), escape(row.status if row.status == "ok" else f"error: {row.error or ''}")]
        for check in run.check_names:
            verdict = row.verdict(check)
            cells.append("" if verdict is None else f'<span title="{escape(verdict.reason)}">{MARK[verdict.status]}</span> {escape(verdict.reason[:60])}')
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f'<table class="agentnb-eval-grid"><tr>{head}</tr>{"".join(body)}</table>' if body else f"<p>no {escape(show)} case</p>"


class EvalView(widgets.VBox):
    """The live progress line, then the results grid with its filters."""

    def __init__(self, name: str, total: int) -> None:
        self.name = name
        self.plan_line = widgets.Label(value="")
        self.line = widgets.Label(value=f"{name}: 0/{total} done")
        self.filters = widgets.ToggleButtons(options=FILTERS, value="all", layout=widgets.Layout(display="none"))
        self.grid = widgets.HTML(value="")
        self.run: EvalRun | None = None
        super().__init__([self.plan_line, self.line, self.filters, self.grid])
        self.filters.observe(lambda change: self._render(), names="value")

    def plan(self, text: str) -> None:
        """The budget gate's plan, shown above the progress line."""
        self.plan_line.value = text

    def update(self, progress: Progress) -> None:
        """A new progress snapshot (from the driver's thread)."""
        self.line.value = progress.line()

    def close_run(self, run: EvalRun) -> None:
        """The evaluation ended: show the grid."""
        self.run = run
        self.filters.layout.display = None
        self._render()

    def _render(self) -> None:
        if self.run is not None:
            self.grid.value = grid_html(self.run, self.filters.value)

    def __repr__(self) -> str:
        return f"EvalView({self.name!r})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data["text/plain"] = f"evaluation {self.name}"  # fixed: nbval compares it
        return bundle


class _Sink:
    """What the driver talks to: shows the view once, forwards progress and the end."""

    def __init__(self, name: str, total: int) -> None:
        self.view = EvalView(name, total)
        display(self.view)

    def plan(self, text: str) -> None:
        self.view.plan(text)

    def update(self, progress: Progress) -> None:
        self.view.update(progress)

    def close(self, run: EvalRun) -> None:
        self.view.close_run(run)


def install() -> None:
    """Show evaluations in the notebook (``%load_ext agentnb`` calls it)."""
    runner.DISPLAYS[:] = [_Sink]


__all__ = ["EvalView", "FILTERS", "grid_html", "install"]
