"""What ``%%chat`` sends when the cell is more than text: ``--attach NAME`` (a variable of the
notebook, or a path) and ``{name}`` in the cell body naming a figure, an image, an array, a file
or a frame of the notebook. Both become parts of the user's message (``agentnb.messages``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..errors import PartError
from ..messages import Part, to_parts
from ..messages.convert import to_part

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``{name}`` in a cell body: a part when ``name`` is an image, file or frame of the notebook."""


def _attachable(value: Any) -> Part | None:
    """``value`` as a part when it is one of the things a message carries besides text (a str
    stays text: a ``{key}`` of the prompt's own templates is left as written)."""
    if isinstance(value, str):
        return None
    try:
        return to_part(value)
    except PartError:
        return None


def _attachment(name: str, ns: Mapping[str, Any], magic: str) -> Part:
    if name in ns:
        value = ns[name]
        try:
            return to_part(Path(value) if isinstance(value, str) else value)
        except PartError as exc:
            raise UsageError(f"{magic}: --attach {name}: {exc}") from None
    path = Path(name).expanduser()
    if not path.exists():
        raise UsageError(
            f"{magic}: --attach {name}: no variable and no file of that name; give a variable "
            "holding a figure, image, array, frame or path, or the path of a file"
        )
    try:
        return to_part(path)
    except PartError as exc:
        raise UsageError(f"{magic}: --attach {name}: {exc}") from None


def chat_message(body: str, attach: Sequence[str], ns: Mapping[str, Any], magic: str) -> str | list[Any]:
    """The message of a ``%%chat`` cell: its body, as text when nothing is attached; else the
    body's text and, in place of each ``{name}`` naming something attachable, that part, then
    the ``--attach`` parts in order."""
    pieces: list[Any] = []
    at = 0
    for match in _PLACEHOLDER.finditer(body):
        part = _attachable(ns[match.group(1)]) if match.group(1) in ns else None
        if part is None:
            continue
        pieces += [body[at : match.start()], part]
        at = match.end()
    pieces.append(body[at:])
    pieces += [_attachment(name, ns, magic) for name in attach]
    if len(pieces) == 1:
        return body
    # The text around a placeholder is a part of its own: the spaces at its edges go.
    return list(
        to_parts(
            [p.strip() if isinstance(p, str) else p for p in pieces if not isinstance(p, str) or p.strip()]
        )
    )


__all__ = ["chat_message"]
