"""Run the notebooks in this folder under nbval, with or without ``--nbval`` on the command line.

``pytest notebooks`` (and ``pytest tests notebooks``) collects every ``*.ipynb`` here as an nbval
test: each code cell runs in a fresh kernel of the current environment and its outputs must
equal the committed ones, after ``nbval_sanitize.cfg``. Notebooks elsewhere (for example
``tests/browser/inspector_demo.ipynb``, saved without outputs) are left alone unless ``--nbval``
is given.

One gap of nbval 0.11 is closed here: it ignores ``update_display_data`` messages, so a cell that
shows a live view and then replaces it (``%%chat`` streams the turn, then leaves its static
record) would be compared as its first, half-finished view. Jupyter front ends and nbconvert
apply the updates; ``get_kernel_message`` below does the same before nbval sees the messages.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from nbval.plugin import IPyNbFile

HERE = Path(__file__).resolve().parent
SANITIZE = HERE / "nbval_sanitize.cfg"


def _display_id(msg: dict[str, Any]) -> str | None:
    return (msg.get("content", {}).get("transient") or {}).get("display_id")


def _is_idle(msg: dict[str, Any], parent: str | None) -> bool:
    return (
        msg["msg_type"] == "status"
        and msg["content"].get("execution_state") == "idle"
        and msg["parent_header"].get("msg_id") == parent
    )


_plain_get_kernel_message = IPyNbFile.get_kernel_message


def _get_kernel_message(self: IPyNbFile, timeout: float | None = None, stream: str = "iopub") -> dict[str, Any]:
    """nbval's message reader, with display updates applied the way a front end applies them.

    When a display that can be updated arrives, the rest of the cell's messages (up to its idle
    status) are read at once; each ``update_display_data`` replaces the data of the display with
    the same id and is then dropped. Messages keep their order.
    """
    if stream != "iopub":
        return _plain_get_kernel_message(self, timeout=timeout, stream=stream)
    queue: deque[dict[str, Any]] = self.__dict__.setdefault("_agentnb_queue", deque())
    if queue:
        return queue.popleft()
    while True:
        msg = _plain_get_kernel_message(self, timeout=timeout, stream=stream)
        if msg["msg_type"] == "update_display_data":
            continue  # its display came in an earlier cell: nothing of this cell to update
        if msg["msg_type"] != "display_data" or _display_id(msg) is None:
            return msg
        break
    parent = msg["parent_header"].get("msg_id")
    pending = [msg]
    while not _is_idle(pending[-1], parent):
        pending.append(_plain_get_kernel_message(self, timeout=timeout, stream=stream))
    shown: dict[str, list[dict[str, Any]]] = {}
    for item in pending:
        if item["msg_type"] == "display_data" and _display_id(item) is not None:
            shown.setdefault(_display_id(item), []).append(item)
    kept = []
    for item in pending:
        if item["msg_type"] == "update_display_data":
            for target in shown.get(_display_id(item), []):
                target["content"]["data"] = item["content"]["data"]
                target["content"]["metadata"] = item["content"].get("metadata", {})
            continue
        kept.append(item)
    queue.extend(kept[1:])
    return kept[0]


# Patched on nbval's class (not a subclass) so `pytest --nbval ...` on these notebooks gets it too;
# conftest.py is only loaded when notebooks/ is part of the run.
IPyNbFile.get_kernel_message = _get_kernel_message  # type: ignore[method-assign]


_plain_setup = IPyNbFile.setup


def _setup(self: IPyNbFile) -> None:
    """nbval's kernel start, with ``JPY_SESSION_NAME`` naming the notebook as Jupyter does, so
    ``%%agent`` saves its session beside that notebook (``NAME.agentnb/``) and not in a shared
    fallback folder with a notice carrying an absolute path."""
    saved = os.environ.get("JPY_SESSION_NAME")
    os.environ["JPY_SESSION_NAME"] = str(Path(self.fspath).resolve())
    try:
        _plain_setup(self)
    finally:
        if saved is None:
            del os.environ["JPY_SESSION_NAME"]
        else:
            os.environ["JPY_SESSION_NAME"] = saved


IPyNbFile.setup = _setup  # type: ignore[method-assign]


class NotebookFile(IPyNbFile):
    """A notebook of this folder: current environment's kernel, this folder's sanitize file."""

    def setup(self) -> None:
        option = self.config.option
        saved = option.nbval_current_env, option.nbval_kernel_name
        # nbval reads the kernel choice from the options; set them only while the kernel starts.
        option.nbval_current_env, option.nbval_kernel_name = True, None
        try:
            super().setup()
        finally:
            option.nbval_current_env, option.nbval_kernel_name = saved

    def get_sanitize_files(self) -> list[str]:
        return super().get_sanitize_files() or [str(SANITIZE)]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    option = parent.config.option
    if option.nbval or option.nbval_lax:
        return None  # nbval's own hook collects it, with the options given
    if file_path.suffix == ".ipynb" and file_path.parent == HERE:
        return NotebookFile.from_parent(parent, path=file_path)
    return None
