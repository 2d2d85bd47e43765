"""What the model reads of a tool's return value."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any


def result_text(value: Any) -> str:
    """What the model sees of a tool's return value."""
    if isinstance(value, str):
        return value
    pydantic = sys.modules.get("pydantic")  # a pydantic model can only exist once pydantic is loaded
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    elif callable(getattr(value, "to_dict", None)) and not isinstance(value, type):
        value = value.to_dict()  # Haystack's rule: an object that serialises itself is sent as that
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


__all__ = ["result_text"]
