"""A pytest plugin (registered as the ``agentnb`` entry point, active wherever agentnb is
installed): notebooks run under nbval behave as their recording says, with nothing to configure.

While nbval starts a notebook's kernel, ``JPY_SESSION_NAME`` names that notebook (as JupyterLab
does), so ``%%agent`` finds the recording beside it even in a folder of several notebooks, and
``AGENTNB_REPLAY=strict`` (unless set otherwise) makes a request that differs from the recording
fail its cell with a diff instead of calling a model; nothing is written to the recording.
Once a cell fails that way, the notebook's later cells are skipped, each saying which cell
failed: their outputs depend on the turn that did not run (a DataFrame of turns with a row
missing, a record never made), and their failures would only hide the one that says why and
how to re-record. Nothing changes for tests that are not notebook cells.
An inspector's output is compared as "an inspector" (``INSPECTOR_PATTERNS``, added to nbval's
sanitize patterns): saved from JupyterLab or Notebook 7 it shows the agent's latest turn
(``agentnb.serverext``), which a re-run shows only once the turns have run; the turns themselves
are compared in their ``%%chat`` records. An evaluation's display is compared as "an evaluation"
(its static record comes with a display update at the run's end, which nbval does not apply); the
run's own record, where a cell shows it, is compared whole. A notebook's cells run in their
notebook's order, together, even when a plugin reorders the tests (pytest-randomly shuffles the
cells of every notebook among each other: they have no module to be grouped by). Nothing changes
for tests that are not notebook cells.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..util.replay import REPLAY_ENV

if TYPE_CHECKING:
    from pluggy import Result

DRIFTED = pytest.StashKey[dict[Path, str]]()
"""Per session: the notebooks whose turn differed from the recording, and the failed cell's name."""
INSPECTOR_PATTERNS: dict[str, str] = {
    # the static view (as displayed, or as a save in Jupyter left it)
    r'^<div class="agentnb-static-inspector[\s\S]*$': "<agentnb inspector>",
    # its text: the widget's repr, or the latest turn a save in Jupyter put there
    r"^Inspector\(agent=[^\n]*, turns=\d+\)$": "<agentnb inspector>",
    r"^[^\n]* · inspector · model [^\n]* turn\(s\) · a static view[\s\S]*$": "<agentnb inspector>",
    # an evaluation display's static record (before and after its run ended)
    r'^<div class="agentnb-static-eval[\s\S]*$': "<agentnb evaluation>",
}
"""nbval sanitize patterns (regex -> replacement) for the outputs of an inspector and of an evaluation display."""


def _notebook_of(item: pytest.Item) -> Path | None:
    parent = getattr(item, "parent", None)
    path = getattr(parent, "path", None) or getattr(item, "path", None)
    if path is None or Path(path).suffix != ".ipynb" or not hasattr(parent, "kernel"):
        return None
    return Path(path).resolve()


def _cell_number(item: pytest.Item) -> int | None:
    """The place of an nbval cell in its notebook; None for any other test."""
    number = getattr(item, "cell_num", None)
    path = getattr(item.parent, "path", None)
    if not isinstance(number, int) or path is None or Path(path).suffix != ".ipynb":
        return None
    return number


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each notebook's cells together and in order, where its first cell was put: one kernel runs
    them top to bottom, and a cell that failed on a drifted turn skips the cells after it."""
    numbered = [(item, _cell_number(item)) for item in items]
    cells: dict[int, list[tuple[int, pytest.Item]]] = {}
    for item, number in numbered:
        if number is not None:
            cells.setdefault(id(item.parent), []).append((number, item))
    if not cells:
        return
    ordered: list[pytest.Item] = []
    for item, number in numbered:
        if number is None:
            ordered.append(item)
        elif (notebook := cells.pop(id(item.parent), None)) is not None:
            ordered.extend(cell for _, cell in sorted(notebook, key=lambda pair: pair[0]))
    items[:] = ordered


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Result[None], None]:
    """Around the setup that starts a notebook's kernel: the notebook's name and strict replay."""
    notebook = _notebook_of(item)
    if notebook is None:
        yield
        return
    drifted = item.session.stash.setdefault(DRIFTED, {})
    if notebook in drifted:
        pytest.skip(
            f"not run: {drifted[notebook]} failed because its turn differs from the recording, "
            f"and this cell's output depends on it (fix or re-record that cell first)"
        )
    saved = {name: os.environ.get(name) for name in ("JPY_SESSION_NAME", REPLAY_ENV)}
    os.environ["JPY_SESSION_NAME"] = str(notebook)
    os.environ.setdefault(REPLAY_ENV, "strict")
    try:
        yield
        patterns = getattr(item.parent, "sanitize_patterns", None)  # nbval's, filled in its setup
        if isinstance(patterns, dict):
            patterns.update(INSPECTOR_PATTERNS)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    """Note a notebook whose cell failed on a turn that differs from the recording."""
    outcome = yield
    report = outcome.get_result()
    notebook = _notebook_of(item)
    if notebook is None or not report.failed or call.when != "call":
        return
    if f"{REPLAY_ENV}=strict" in report.longreprtext:
        item.session.stash.setdefault(DRIFTED, {})[notebook] = item.name
