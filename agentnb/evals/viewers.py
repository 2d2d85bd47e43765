"""How a run or a comparison shows one of its cases: through the notebook's case inspector, which
``%load_ext agentnb`` puts in ``agentnb.slots.case_inspector`` (evaluation never imports the
notebook layer)."""

from __future__ import annotations

from typing import Any

from .. import slots
from ..errors import EvalCheckError
from ..util.extras import install_line


def inspect_case(target: Any, case_id: str, repeat: int) -> Any:
    """The inspector on case ``case_id`` of ``target`` (a run, or a comparison of two)."""
    inspect = slots.case_inspector.get()
    if inspect is None:
        raise EvalCheckError(
            f"showing a case needs the notebook: %load_ext agentnb ({install_line('notebook')})"
        )
    return inspect(target, str(case_id), repeat)


__all__ = ["inspect_case"]
