"""Where a notebook's sessions live: ``analysis.ipynb`` → ``analysis.agentnb/`` beside it.

The notebook's path is found the way front ends expose it, without importing IPython (the
caller passes the user namespace): VS Code sets ``__vsc_ipynb_file__`` in the namespace;
JupyterLab and Notebook 7 put ``JPY_SESSION_NAME`` in the kernel's environment; nbval and
nbconvert run the kernel in the notebook's directory, where a lone ``.ipynb`` names it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SESSION_DIR_SUFFIX = ".agentnb"
"""``<notebook stem>.agentnb`` is the folder holding a notebook's sessions."""


@dataclass(frozen=True)
class NotebookLocation:
    """Where a notebook was found, and how."""

    path: Path | None
    """The notebook file, or None when it could not be found."""
    source: str
    """How: 'explicit', 'vscode', 'jupyter', 'cwd' or 'fallback'."""
    session_dir: Path
    """The folder its sessions go to."""
    notice: str | None = None
    """A one-line notice for the user when the path was guessed."""


def notebook_session_dir(notebook_path: str | os.PathLike[str]) -> Path:
    """``analysis.ipynb`` → ``analysis.agentnb`` in the same folder."""
    path = Path(notebook_path)
    if path.suffix != ".ipynb":
        raise ValueError(f"{str(path)!r} is not a notebook path (expected a name ending in .ipynb)")
    return path.with_name(path.stem + SESSION_DIR_SUFFIX)


def find_notebook_path(
    user_ns: Mapping[str, Any] | None = None,
    *,
    explicit: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    cell: str | None = None,
) -> NotebookLocation:
    """Find the running notebook; fall back to ``<cwd>/notebook.agentnb`` with a notice.

    ``cell`` is the source of the cell asking: among several notebooks in the working folder
    (``jupyter nbconvert --execute`` tells the kernel nothing else), the one holding that cell
    is the one running."""
    env = os.environ if environ is None else environ
    here = Path(cwd) if cwd is not None else Path.cwd()
    if explicit is not None:
        path = (here / Path(explicit)).resolve()
        return NotebookLocation(path, "explicit", notebook_session_dir(path))
    vscode = (user_ns or {}).get("__vsc_ipynb_file__")
    if isinstance(vscode, str) and vscode.endswith(".ipynb"):
        path = Path(vscode)
        return NotebookLocation(path, "vscode", notebook_session_dir(path))
    session_name = env.get("JPY_SESSION_NAME")
    if session_name and session_name.endswith(".ipynb"):
        path = Path(session_name)
        if not path.is_absolute():
            # Jupyter server gives a path relative to its root; the kernel runs in the notebook's folder.
            candidate = here / path.name
            path = candidate if candidate.exists() else (here / path)
        return NotebookLocation(path, "jupyter", notebook_session_dir(path))
    notebooks = sorted(here.glob("*.ipynb"))
    if len(notebooks) > 1 and cell is not None:
        notebooks = [p for p in notebooks if _holds_cell(p, cell)] or notebooks
    if len(notebooks) == 1:
        path = notebooks[0]
        return NotebookLocation(path, "cwd", notebook_session_dir(path))
    folder = here / ("notebook" + SESSION_DIR_SUFFIX)
    shown = folder.name if cwd is None else str(folder)  # relative: the same text on every machine
    return NotebookLocation(
        None,
        "fallback",
        folder,
        notice=f"agentnb: could not tell which notebook this is; saving sessions in {shown}/ "
        f"(choose with %%agent --session FOLDER or %agentnb defaults --session-dir FOLDER)",
    )


def _holds_cell(path: Path, cell: str) -> bool:
    """Whether the notebook at ``path`` has a code cell with this source (read as plain JSON)."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return False
    wanted = cell.strip()
    for item in cells:
        source = item.get("source", "") if isinstance(item, dict) else ""
        if (
            item.get("cell_type") == "code"
            and ("".join(source) if isinstance(source, list) else str(source)).strip() == wanted
        ):
            return True
    return False
