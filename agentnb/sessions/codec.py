"""Strict JSON encoding of state values, with a registry for types JSON cannot hold.

A value JSON cannot represent is an error at save time that names the key path and the type,
never a silent ``str()``; NaN and the infinities are stored tagged. Types that need it get an
encoder: ``register_encoder(type, name, encode, decode)``; the stored form is
``{"$agentnb": name, "value": encode(obj)}`` and loading calls ``decode`` for that name. Decoders
are looked up by name in this process's registry, so loading never imports or executes anything
named by the file.

The tag also marks a stored image or file (``{"$agentnb": "part", ...}``: ``agentnb.messages``),
whose bytes the session keeps beside it. A key of the user's that is the tag, or the tag followed
by ``$`` signs, is written with one ``$`` more (``"$agentnb$"``), and read back with one less: no
dict the user stored ever has the tag as a key, at any depth, so none is read as an encoded
value or a part, and each stays a plain dict (a later save's change to it applies as to any
other), its keys in order. (Files written before this wrapped such a dict whole, as
``{"$agentnb": "dict", "value": {...}}``; they read as they were.)
"""

from __future__ import annotations

import base64
import datetime
import math
import pathlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import SessionEncodeError, SessionFormatError
from ..messages.parts import MARK, PART_MARK, StoredPart

TAG = MARK
"""The key marking an encoded (non-JSON) value, or a stored part, in a session file."""
RESERVED = ("dict", "float", PART_MARK)
"""Tags the codec writes itself: no encoder may be registered under them."""
_PART_TAGGED = f'"{TAG}":"{PART_MARK}"'


def escape_key(key: str) -> str:
    """A user's dict key as stored: the tag (or the tag and ``$`` signs) gets one ``$`` more."""
    return key + "$" if key.startswith(TAG) and key.rstrip("$") == TAG else key


def unescape_key(key: str) -> str:
    """A stored dict key as the user gave it (``escape_key`` reversed)."""
    return key[:-1] if len(key) > len(TAG) and key.startswith(TAG) and key.rstrip("$") == TAG else key


@dataclass(frozen=True)
class Encoder:
    """How one Python type is stored in a session file."""

    type: type
    """The Python type (subclasses match too)."""
    name: str
    """The tag written next to the value; decoders are found by it."""
    encode: Callable[[Any], Any]
    """obj -> a JSON value."""
    decode: Callable[[Any], Any]
    """The JSON value -> obj."""


_BY_TYPE: dict[type, Encoder] = {}
_BY_NAME: dict[str, Encoder] = {}


def register_encoder(
    type_: type,
    name: str,
    encode: Callable[[Any], Any],
    decode: Callable[[Any], Any],
) -> None:
    """Let session files hold values of ``type_``: ``encode(obj)`` must return a JSON value,
    ``decode(json_value)`` rebuilds the object on load. ``name`` is written in the file."""
    if not isinstance(type_, type):
        raise TypeError(f"register_encoder needs a type as its first argument, got {type_!r}")
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_encoder needs a non-empty name, got {name!r}")
    if name in RESERVED:
        raise TypeError(
            f"register_encoder cannot use the name {name!r}: agentnb writes it itself; choose another"
        )
    if not callable(encode) or not callable(decode):
        raise TypeError("register_encoder needs encode and decode functions")
    encoder = Encoder(type=type_, name=name, encode=encode, decode=decode)
    _BY_TYPE[type_] = encoder
    _BY_NAME[name] = encoder


def unregister_encoder(type_: type) -> None:
    """Forget the encoder registered for ``type_`` (no error if there is none)."""
    encoder = _BY_TYPE.pop(type_, None)
    if encoder is not None and _BY_NAME.get(encoder.name) is encoder:
        del _BY_NAME[encoder.name]


register_encoder(datetime.datetime, "datetime", datetime.datetime.isoformat, datetime.datetime.fromisoformat)
register_encoder(datetime.date, "date", datetime.date.isoformat, datetime.date.fromisoformat)
register_encoder(set, "set", list, set)
register_encoder(frozenset, "frozenset", list, frozenset)
register_encoder(bytes, "bytes", lambda b: base64.b64encode(b).decode("ascii"), base64.b64decode)
register_encoder(pathlib.PurePath, "path", str, pathlib.Path)

_PLAIN = (str, int, bool, type(None))
_NON_FINITE = ("nan", "inf", "-inf")


def _find_encoder(value: Any) -> Encoder | None:
    encoder = _BY_TYPE.get(type(value))
    if encoder is not None:
        return encoder
    # Most specific registered base class first (datetime before date).
    for cls in type(value).__mro__[1:]:
        if cls in _BY_TYPE:
            return _BY_TYPE[cls]
    return None


def encode(value: Any, path: str) -> Any:
    """``value`` as JSON-ready data (the same object when nothing needed encoding).

    Raises SessionEncodeError naming ``path`` (e.g. ``agent.state.orders[2].when``) for a
    value JSON cannot hold: an unregistered type or a non-string dict key.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is StoredPart:  # a part as Message.to_dict stored it: marked, and plain JSON already
        return value
    if kind is float:
        # NaN and the infinities are not JSON numbers: stored tagged, they come back as floats.
        return value if math.isfinite(value) else {TAG: "float", "value": repr(value)}
    if kind is dict:
        out = value
        escaped = False
        for key, item in value.items():
            if type(key) is not str:
                raise SessionEncodeError(
                    f"cannot save {path}: dict key {key!r} is a {type(key).__name__}; JSON keys are "
                    f"strings, so use str keys (e.g. {str(key)!r})"
                )
            escaped = escaped or key.startswith(TAG)
            new = encode(item, f"{path}.{key}")
            if new is not item:
                if out is value:
                    out = dict(value)
                out[key] = new
        if escaped:  # a key of the user's that is our tag: escaped, so it loads back as it was
            return {escape_key(key): item for key, item in out.items()}
        return out
    if kind is list or kind is tuple:
        out_list: list[Any] | None = None
        for i, item in enumerate(value):
            new = encode(item, f"{path}[{i}]")
            if new is not item and out_list is None:
                out_list = list(value[:i])
            if out_list is not None:
                out_list.append(new)
        if out_list is not None:
            return out_list
        return value if kind is list else list(value)
    encoder = _find_encoder(value)
    if encoder is None:
        if isinstance(value, (str, int, float, dict, list, tuple)):
            # subclasses (IntEnum, OrderedDict, NamedTuple...) store as their JSON base type
            if isinstance(value, tuple):  # a tuple is stored as a list
                return encode(list(value), path)
            base: type[Any] = next(b for b in (bool, int, float, str, dict, list) if isinstance(value, b))
            return encode(base(value), path)
        raise SessionEncodeError(
            f"cannot save {path}: a {type(value).__module__}.{type(value).__qualname__} is not JSON. "
            f"Store plain data (dict, list, str, int, float, bool, None), or register an encoder: "
            f"agentnb.sessions.register_encoder({type(value).__qualname__}, "
            f"'{type(value).__qualname__}', encode=..., decode=...)"
        )
    try:
        encoded = encoder.encode(value)
    except Exception as exc:
        raise SessionEncodeError(f"cannot save {path}: encoder {encoder.name!r} failed: {exc}") from exc
    return {TAG: encoder.name, "value": encode(encoded, f"{path}<{encoder.name}>")}


def escape(value: Any) -> Any:
    """``value`` with every dict key of the user's that is the tag escaped as ``encode`` escapes
    it, and nothing else changed (for stores that write other values their own way: an
    evaluation's); ``unescape`` reverses it. The same object when nothing needed escaping."""
    kind = type(value)
    if kind is StoredPart or kind in _PLAIN or kind is float:
        return value
    if isinstance(value, dict):
        out = {escape_key(key) if isinstance(key, str) else key: escape(item) for key, item in value.items()}
        same = kind is dict and all(
            a is b and k1 == k2 for (k1, a), (k2, b) in zip(out.items(), value.items())
        )
        return value if same else out
    if isinstance(value, (list, tuple)):
        items = [escape(item) for item in value]
        return items if any(a is not b for a, b in zip(items, value)) else value
    return value


def unescape(value: Any) -> Any:
    """What ``escape`` escaped, back as it was (every other value as it is)."""
    if isinstance(value, dict):
        return {unescape_key(key): unescape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unescape(item) for item in value]
    return value


def tagged(text: str | bytes) -> bool:
    """Whether stored ``text`` may hold encoded values (``decode`` has something to do): a tag
    that is not a stored part's mark (written compactly, as sessions write)."""
    if isinstance(text, bytes):
        mark, part = TAG.encode(), _PART_TAGGED.encode()
        return text.count(mark) > text.count(part)
    return text.count(TAG) > text.count(_PART_TAGGED)


def decode(value: Any, where: str) -> Any:
    """Rebuild encoded values inside loaded JSON data (``where`` names the file for errors)."""
    try:
        return _decode(value, where)
    except RecursionError:
        raise SessionFormatError(f"{where}: a value is nested too deeply to load") from None


def _decode(value: Any, where: str) -> Any:
    if isinstance(value, dict):
        if TAG in value:
            name = value[TAG]
            if name == PART_MARK:  # a stored part: its message reads it
                return value
            inner = value.get("value")
            if name == "dict" and isinstance(inner, dict):
                return {k: _decode(v, where) for k, v in inner.items()}
            if name == "float" and inner in _NON_FINITE:
                return float(inner)
            if name in ("dict", "float"):
                raise SessionFormatError(
                    f"{where}: a value tagged {name!r} holds {inner!r:.80}, which is not one"
                )
            encoder = _BY_NAME.get(name) if isinstance(name, str) else None
            if encoder is None:
                raise SessionFormatError(
                    f"{where}: a value was saved with the encoder {name!r}, which is not registered "
                    f"here; call agentnb.sessions.register_encoder(<type>, {name!r}, encode, decode) "
                    f"before loading"
                )
            try:
                return encoder.decode(_decode(inner, where))
            except Exception as exc:
                raise SessionFormatError(
                    f"{where}: decoder {name!r} failed on {inner!r:.200}: {exc}"
                ) from exc
        return {unescape_key(k): _decode(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v, where) for v in value]
    return value
