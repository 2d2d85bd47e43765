"""Where the notebook layer plugs into evaluation: how a case is shown (``INSPECT``) and how a
running evaluation shows itself (``DISPLAYS``). ``%load_ext agentnb`` fills both; evaluation
itself never imports the notebook layer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import EvalCheckError

INSPECT: list[Callable[..., Any]] = []
"""How ``run.inspect(case_id)`` shows a case: the notebook layer puts its function here."""

DISPLAYS: list[Callable[[str, int], Any]] = []
"""Where a running evaluation shows itself: the notebook layer puts a factory here when it loads
(``(name, total) -> sink`` with ``update(progress)``, ``plan(text)`` and ``close(run)``)."""


def inspect_case(target: Any, case_id: str, repeat: int) -> Any:
    """The inspector on case ``case_id`` of ``target`` (a run, or a comparison of two)."""
    if not INSPECT:
        raise EvalCheckError(
            "showing a case needs the notebook: %load_ext agentnb (pip install 'agentnb[notebook]')"
        )
    return INSPECT[0](target, str(case_id), repeat)


__all__ = ["DISPLAYS", "INSPECT", "inspect_case"]
