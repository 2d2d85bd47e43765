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

from .. import slots
from ..evals import EvalRun, Progress

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
        cells = [
            escape(row.case.id),
            str(row.repeat + 1),
            escape(row.status if row.status == "ok" else f"{row.status}: {row.error or ''}"),
        ]
        for check in run.check_names:
            verdict = row.verdict(check)
            cells.append(
                ""
                if verdict is None
                else (
                    f'<span title="{escape(verdict.reason)}">{MARK[verdict.status]}</span> '
                    f"{escape(verdict.reason[:60])}"
                )
            )
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        f'<table class="agentnb-eval-grid"><tr>{head}</tr>{"".join(body)}</table>'
        if body
        else f"<p>no {escape(show)} case</p>"
    )


def case_options(run: EvalRun, show: str = "all") -> list[tuple[str, tuple[str, int]]]:
    """The grid's cases as (label, (case id, repeat)) for the picker, filtered as the grid is."""
    outcomes: dict[str, set[Any]] = {}
    for row in run.rows:
        outcomes.setdefault(row.case.id, set()).add(row.passed)
    out = []
    for row in run.rows:
        if show == "failed" and not (row.status == "ok" and row.passed is not True):
            continue
        if show == "errored" and row.status == "ok":
            continue
        if show == "flaky" and len(outcomes[row.case.id]) < 2:
            continue
        marks = " ".join(MARK[v.status] for v in row.verdicts)
        out.append(
            (
                f"{row.case.id}" + (f" #{row.repeat + 1}" if row.repeat else "") + f"  {marks}",
                (row.case.id, row.repeat),
            )
        )
    return out


class EvalView(widgets.VBox):
    """The live progress line, then the results grid with its filters and a case picker that
    opens the chosen case in the inspector (its Checks tab holds the verdicts)."""

    def __init__(self, name: str, total: int) -> None:
        self.name = name
        self.plan_line = widgets.Label(value="")
        self.line = widgets.Label(value=f"{name}: 0/{total} done")
        hidden = widgets.Layout(display="none")
        self.filters = widgets.ToggleButtons(options=FILTERS, value="all", layout=hidden)
        self.grid = widgets.HTML(value="")
        self.picker = widgets.Dropdown(options=[], description="case", layout=widgets.Layout(display="none"))
        self.open_button = widgets.Button(
            description="open in inspector", layout=widgets.Layout(display="none")
        )
        self.shown = widgets.Output()
        self.run: EvalRun | None = None
        super().__init__(
            [
                self.plan_line,
                self.line,
                self.filters,
                self.grid,
                widgets.HBox([self.picker, self.open_button]),
                self.shown,
            ]
        )
        self.filters.observe(lambda change: self._render(), names="value")
        self.open_button.on_click(lambda button: self.open_case())

    def open_case(self, case: tuple[str, int] | None = None) -> Any:
        """Show the picked case (or ``case``) in the inspector below the grid."""
        from .case_inspector import case_inspector

        chosen = case or self.picker.value
        if self.run is None or chosen is None:
            return None
        widget = case_inspector(self.run, chosen[0], chosen[1])
        self.shown.clear_output()
        with self.shown:
            display(widget)
        return widget

    def plan(self, text: str) -> None:
        """The budget gate's plan, shown above the progress line."""
        self.plan_line.value = text

    def update(self, progress: Progress) -> None:
        """A new progress snapshot (from the driver's thread)."""
        self.line.value = progress.line()

    def close_run(self, run: EvalRun) -> None:
        """The evaluation ended: show the grid."""
        self.run = run
        for control in (self.filters, self.picker, self.open_button):
            control.layout.display = None
        self._render()

    def _render(self) -> None:
        if self.run is not None:
            self.grid.value = grid_html(self.run, self.filters.value)
            self.picker.options = case_options(self.run, self.filters.value)

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


def _inspect(target: Any, case_id: str, repeat: int) -> Any:
    from .case_inspector import inspect

    return inspect(target, case_id, repeat)


def install() -> None:
    """Show evaluations in the notebook (``%load_ext agentnb`` calls it)."""
    slots.eval_display.fill(_Sink)
    slots.case_inspector.fill(_inspect)


__all__ = ["EvalView", "FILTERS", "case_options", "grid_html", "install"]
