"""An evaluation in the notebook: a live progress line while it runs, then a results grid; a
comparison of two evaluations as a grid of paired cases.

The evaluation's grid is a row per (case, repeat) with ✓ / ✗ / ! per check and the reason beside
it, filters for failed, errored and flaky cases (a case whose repeats disagree), and a case picker
that opens the case in the inspector on its Checks tab. A comparison's grid pairs the two runs'
cases, marks the flips, filters them, and opens a case in the inspector on its Compare tab.
The grids' HTML is made in ``eval_grid.py``.

Where the widgets cannot be drawn (a notebook reopened with no kernel, GitHub, nbconvert's HTML)
the same output shows its static record (``text/html``): the run's record (summary, rates per
check, the failing cases) once the evaluation has ended, brought into the output by a display
update; a saved notebook keeps that record and drops the widget view (``agentnb.serverext``).
Text/plain is fixed (nbval compares it).
"""

from __future__ import annotations

from dataclasses import replace
from html import escape
from typing import Any

import ipywidgets as widgets
from IPython.display import display, update_display

from .. import slots
from ..evals import EvalComparison, EvalRun, Progress
from .eval_grid import (
    COMPARE_FILTERS,
    FILTERS,
    case_options,
    comparison_grid_html,
    comparison_options,
    grid_html,
    summary_html,
)

STATIC_EVAL_CLASS = "agentnb-static-eval"
"""The class of an evaluation display's static record (``agentnb.serverext`` knows it)."""
RERUN = "re-run the cell for the live grid and its cases in the inspector"
"""What a static record says to do."""


def static_record(name: str, run: EvalRun | None) -> str:
    """The display's static record: the run's record once it has ended, else that it had not."""
    body = (
        run.html()
        if run is not None
        else f"<p>evaluation {escape(name)}: it had not finished when this output was saved</p>"
    )
    note = f'<p class="agentnb-static-note">a static record: {RERUN}</p>'
    return f'<div class="{STATIC_EVAL_CLASS} tex2jax_ignore mathjax_ignore">{body}{note}</div>'


def _bundle_data(bundle: Any) -> dict[str, Any] | None:
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    return data if isinstance(data, dict) else None


def _in_kernel() -> bool:
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


class _Picker(widgets.VBox):
    """Filters, a case picker and its button above a grid, and the inspector the button opens
    below it (the grid scrolls in its own box, so the controls stay in reach)."""

    def __init__(self, filters: tuple[str, ...], button: str, head: list[widgets.Widget]) -> None:
        hidden = widgets.Layout(display="none")
        self.filters = widgets.ToggleButtons(options=filters, value="all", layout=hidden)
        self.picker = widgets.Dropdown(options=[], description="case", layout=widgets.Layout(display="none"))
        self.open_button = widgets.Button(description=button, layout=widgets.Layout(display="none"))
        self.grid = widgets.HTML(value="")
        self.shown = widgets.Output()
        controls = widgets.HBox(
            [self.filters, self.picker, self.open_button], layout=widgets.Layout(flex_flow="row wrap")
        )
        super().__init__([*head, controls, self.grid, self.shown])
        self.filters.observe(lambda change: self._render(), names="value")
        self.open_button.on_click(lambda button: self.open_case())

    def _ready(self) -> None:
        for control in (self.filters, self.picker, self.open_button):
            control.layout.display = None
        self._render()

    def _render(self) -> None:
        """Draw the grid and the picker's cases for the filter chosen (each view its own)."""
        raise NotImplementedError

    def _show_cases(self, options: list[tuple[str, tuple[str, int]]]) -> None:
        """The picker's cases: the one picked stays picked while the filter keeps it, else the
        first is (so "open" opens a case without choosing one first)."""
        kept = self.picker.value
        self.picker.options = options
        values = [value for _, value in options]
        self.picker.value = kept if kept in values else (values[0] if values else None)

    def _inspector(self, case: tuple[str, int]) -> Any:
        """The inspector of ``case`` (each view opens it on the tab that answers its question)."""
        raise NotImplementedError

    def open_case(self, case: tuple[str, int] | None = None) -> Any:
        """Show the picked case (or ``case``) in the inspector below the grid."""
        chosen = case or self.picker.value
        if chosen is None:
            return None
        widget = self._inspector(chosen)
        if widget is None:
            return None
        self.shown.clear_output()
        with self.shown:
            display(widget)
        return widget


class EvalView(_Picker):
    """The live progress line, then the results grid with its filters and a case picker that
    opens the chosen case in the inspector on its Checks tab."""

    def __init__(self, name: str, total: int) -> None:
        self.name = name
        self.plan_line = widgets.Label(value="")
        self.line = widgets.Label(value=f"{name}: 0/{total} done")
        self.progress: Progress | None = None
        self.run: EvalRun | None = None
        super().__init__(FILTERS, "open in inspector", [self.plan_line, self.line])

    @property
    def display_id(self) -> str:
        """The display id of its output (updated with the static record when the run ends)."""
        return f"agentnb-eval-{self.model_id}"

    def show(self) -> None:
        """Display the view under the current cell."""
        display(self, display_id=self.display_id)

    def _inspector(self, case: tuple[str, int]) -> Any:
        from .case_inspector import case_inspector

        return None if self.run is None else case_inspector(self.run, case[0], case[1])

    def plan(self, text: str) -> None:
        """The budget gate's plan, shown above the progress line."""
        self.plan_line.value = text

    def update(self, progress: Progress) -> None:
        """A new progress snapshot (from the driver's thread)."""
        self.progress = progress
        self.line.value = progress.line()

    def close_run(self, run: EvalRun) -> None:
        """The evaluation ended: the final line (tokens as the record counts them: a replayed
        run's too), the grid, and the static record in the output."""
        self.run = run
        if self.progress is not None:
            self.line.value = final_line(self.progress, run)
        self._ready()
        if _in_kernel():
            update_display(self._repr_mimebundle_(), raw=True, display_id=self.display_id)

    def _render(self) -> None:
        if self.run is not None:
            self.grid.value = grid_html(self.run, self.filters.value)
            self._show_cases(case_options(self.run, self.filters.value))

    def __repr__(self) -> str:
        return f"EvalView({self.name!r})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data = _bundle_data(bundle)
        if data is not None:
            data["text/plain"] = f"evaluation {self.name}"  # fixed: nbval compares it
            data["text/html"] = static_record(self.name, self.run)
        return bundle


def final_line(progress: Progress, run: EvalRun) -> str:
    """The progress line at the end, its tokens those of the record (a run replayed from the
    store spent none now, but its record counts what it cost)."""
    given = sum(r.tokens[0] for r in run.rows)
    taken = sum(r.tokens[1] for r in run.rows)
    spent = progress.input_tokens + progress.output_tokens
    line = replace(progress, input_tokens=given, output_tokens=taken, running=0).line()
    return line + (f" ({spent:,} spent now: the rest replayed as recorded)" if spent != given + taken else "")


class ComparisonView(_Picker):
    """A comparison as a grid of paired cases: the rates per check, then a row per case with
    both sides' marks and the flips marked; a flipped case opens in the inspector on Compare."""

    def __init__(self, comparison: EvalComparison) -> None:
        self.comparison = comparison
        title = widgets.Label(
            value=f"{comparison.candidate.name} vs {comparison.baseline.name} · {len(comparison.pairs)} paired run(s)"
        )
        summary = widgets.HTML(value=summary_html(comparison))
        super().__init__(COMPARE_FILTERS, "open in Compare", [title, summary])
        self._ready()

    def _inspector(self, case: tuple[str, int]) -> Any:
        from .case_inspector import inspect

        return inspect(self.comparison, case[0], case[1])

    def _render(self) -> None:
        self.grid.value = comparison_grid_html(self.comparison, self.filters.value)
        self._show_cases(comparison_options(self.comparison, self.filters.value))

    def __repr__(self) -> str:
        return f"ComparisonView({self.comparison.candidate.name!r} vs {self.comparison.baseline.name!r})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data = _bundle_data(bundle)
        if data is not None:
            data["text/plain"] = self.comparison.text()
            data["text/html"] = self.comparison.html()
        return bundle


def comparison_bundle(comparison: EvalComparison) -> Any:
    """How a cell ending with a comparison shows it: its grid (IPython's mimebundle formatter)."""
    return ComparisonView(comparison)._repr_mimebundle_()


class _Sink:
    """What the driver talks to: shows the view once, forwards progress and the end."""

    def __init__(self, name: str, total: int) -> None:
        self.view = EvalView(name, total)
        self.view.show()

    def plan(self, text: str) -> None:
        self.view.plan(text)

    def update(self, progress: Progress) -> None:
        self.view.update(progress)

    def close(self, run: EvalRun) -> None:
        self.view.close_run(run)


def _inspect(target: Any, case_id: str, repeat: int) -> Any:
    from .case_inspector import inspect

    return inspect(target, case_id, repeat)


def install(shell: Any = None) -> None:
    """Show evaluations in the notebook (``%load_ext agentnb`` calls it), and comparisons as
    their grid in ``shell``."""
    slots.eval_display.fill(_Sink)
    slots.case_inspector.fill(_inspect)
    if shell is not None:
        shell.display_formatter.mimebundle_formatter.for_type(EvalComparison, comparison_bundle)


__all__ = [
    "ComparisonView",
    "EvalView",
    "FILTERS",
    "case_options",
    "comparison_bundle",
    "final_line",
    "grid_html",
    "install",
    "static_record",
]
