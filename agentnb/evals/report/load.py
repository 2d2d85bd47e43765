"""A stored evaluation read back without running anything: ``agentnb.evals.load_run(NAME)``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...errors import EvalStoreError
from ...sessions import find_notebook_path
from ..engine.store import EvalStore, check_name
from .case_row import CaseRow
from .eval_run import EvalRun


def load_run(name: str, folder: str | Path | None = None, checks: Iterable[Any] | None = None) -> EvalRun:
    """A stored evaluation read back (its last line of each (case, repeat)), without running anything."""
    root = Path(folder) if folder is not None else find_notebook_path(None).session_dir
    store = EvalStore(root / "evals" / check_name(name))
    manifest = store.read_manifest()
    if manifest is None:
        raise EvalStoreError(
            f"no evaluation {name!r} in {store.folder.parent}; run agent.evaluate(..., name={name!r}) first"
        )
    rows = [CaseRow.from_dict(line) for line in store.rows().values()]
    names = [c["name"] for c in manifest.get("checks") or []]
    run = EvalRun(name, rows, names, store=store)
    return run.rescore(checks) if checks is not None else run


__all__ = ["load_run"]
