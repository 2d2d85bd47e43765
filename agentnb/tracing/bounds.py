"""What a span's attributes look like as they leave: no credential, and a bounded size.

Every string value goes through the model's own redactor (which knows the configured key, the
credentials in the base URL and the auth headers, whatever their shape) and the ``sk-…`` /
``Bearer …`` pattern. Then each value is cut to ``MAX_VALUE_BYTES`` and the span's values
together to ``MAX_SPAN_BYTES`` (the largest are cut first). A cut value ends with a marker
saying how long it was, and the span's ``agentnb.truncated`` lists the attributes that were cut,
so a turn's batch stays well under an OTLP collector's default 4 MiB request limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models.credentials import Redactor
from . import conventions as sc
from .content import scrub

MAX_VALUE_BYTES = 32 * 1024
"""One attribute value at most (UTF-8 bytes)."""

MAX_SPAN_BYTES = 128 * 1024
"""All of one span's attribute values together at most (UTF-8 bytes)."""

_PRECUT = MAX_VALUE_BYTES + 4096


def finish(attrs: Mapping[str, Any], redactor: Redactor | None = None) -> dict[str, Any]:
    """``attrs`` redacted and bounded, with ``agentnb.truncated`` naming what was cut."""
    # A huge value is shortened before it is redacted (the work stays bounded), with a margin
    # longer than any credential, so none is split where the final cut, further in, keeps text.
    sizes = {k: _size(v) for k, v in attrs.items() if isinstance(v, str) and len(v) > _PRECUT}
    out = {k: _redacted(v[:_PRECUT] if k in sizes else v, redactor) for k, v in attrs.items()}
    cut: set[str] = set()
    for key, value in out.items():
        if isinstance(value, str) and (key in sizes or _size(value) > MAX_VALUE_BYTES):
            out[key] = _cut(value, MAX_VALUE_BYTES, original=sizes.get(key))
            cut.add(key)
        elif isinstance(value, (list, tuple)) and sum(_size(v) for v in value) > MAX_VALUE_BYTES:
            out[key] = _cut_items(value)
            cut.add(key)
    excess = sum(_size(v) for v in out.values()) - MAX_SPAN_BYTES
    while excess > 0:
        strings = [k for k, v in out.items() if isinstance(v, str)]
        if not strings:
            break
        key = max(strings, key=lambda k: _size(out[k]))
        if _size(out[key]) <= len(_marker(0)) * 2:
            break  # nothing left worth cutting (a span of many small values)
        before = _size(out[key])
        out[key] = _cut(out[key], max(before - excess, len(_marker(0)) * 2), _original(out[key]))
        cut.add(key)
        excess -= before - _size(out[key])
    if cut:
        out[sc.TRUNCATED] = tuple(sorted(cut))
    return out


def _redacted(value: Any, redactor: Redactor | None) -> Any:
    if isinstance(value, str):
        return scrub(redactor.text(value) if redactor else value)
    if isinstance(value, (list, tuple)):
        return tuple(_redacted(v, redactor) for v in value)
    return value


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, (list, tuple)):
        return sum(_size(v) for v in value)
    return 8


_MARK = "…[truncated from "


def _marker(size: int) -> str:
    return f"{_MARK}{size:,} bytes]"


def _original(text: str) -> int | None:
    """The size a value had before an earlier cut (its marker says), else None."""
    at = text.rfind(_MARK)
    if at < 0 or not text.endswith(" bytes]"):
        return None
    try:
        return int(text[at + len(_MARK) : -len(" bytes]")].replace(",", ""))
    except ValueError:
        return None


def _cut(text: str, limit: int, original: int | None = None) -> str:
    """``text`` in at most ``limit`` UTF-8 bytes, its marker included (saying ``original``, the
    size before any cut, when the text is already shortened)."""
    if original is not None and text.rfind(_MARK) >= 0:  # cut again: drop the earlier marker
        text = text[: text.rfind(_MARK)]
    marker = _marker(original if original is not None else _size(text))
    room = max(0, limit - _size(marker))
    kept = text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")
    return kept + marker


def _cut_items(values: Any) -> tuple[Any, ...]:
    kept: list[Any] = []
    used = 0
    for value in values:
        size = _size(value)
        if used + size > MAX_VALUE_BYTES:
            break
        kept.append(value)
        used += size
    return tuple(kept)


__all__ = ["MAX_SPAN_BYTES", "MAX_VALUE_BYTES", "finish"]
