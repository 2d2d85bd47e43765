"""A stored evaluation read back without running anything: ``agentnb.evals.load_run(NAME)``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import EvalStoreError
from ...sessions import find_notebook_path
from ..cases import Case
from ..engine.store import EvalStore, check_name
from .case_row import CaseRow
from .eval_run import EvalRun


def load_run(name: str, folder: str | Path | None = None, checks: Iterable[Any] | None = None) -> EvalRun:
    """A stored evaluation read back without running anything: a row per (case, repeat) its
    manifest lists, in its order, from the last line of each in the store. One with no readable
    line is a row of status ``missing`` whose ``error`` says why (which line did not parse) and
    how to run it again; a manifest or line of the wrong shape is an ``EvalStoreError`` naming the
    file and the line. ``checks`` scores the stored turns again (``run.rescore``)."""
    root = Path(folder) if folder is not None else find_notebook_path(None).session_dir
    store = EvalStore(root / "evals" / check_name(name))
    manifest = store.read_manifest()
    if manifest is None:
        raise EvalStoreError(
            f"no evaluation {name!r} in {store.folder.parent}; run agent.evaluate(..., name={name!r}) first"
        )
    lines = store.rows()
    again = f"; agent.evaluate(..., name={name!r}) runs it again (the finished cases replay)"
    rows = []
    for data in manifest["cases"]:
        case = Case.from_dict(data)
        for repeat in range(manifest["repeat"]):
            line = lines.get((case.id, repeat))
            if line is None:
                rows.append(CaseRow.missing(case, repeat, store.missing_reason(case.id) + again))
            else:
                rows.append(CaseRow.from_dict(line))
    run = EvalRun(name, rows, [c["name"] for c in manifest.get("checks", [])], store=store)
    return run.rescore(checks) if checks is not None else run


__all__ = ["load_run"]
