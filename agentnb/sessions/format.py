"""The on-disk format: snapshot metadata, log lines, and replaying lines onto module states.

A session is a snapshot ``{module_name: state_dict, "__agentnb__": meta}`` plus an append-only
log of lines, each one JSON object::

    {"v": 1, "seq": 8, "at": 1700000000.0, "module": "agent", "op": "delta", "ops": [...]}

``op`` is ``replace`` (``"state"`` holds the module's whole state_dict), ``delta`` (``"ops"``
lists changes, see ``apply_ops``) or ``base`` (a log's first line after compaction, carrying
only ``seq``). Lines with ``seq`` at or below the snapshot's were folded into it.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from ..errors import SessionFormatError
from .repeats import restore_repeats

FORMAT = "agentnb.session"
"""The value of ``__agentnb__.format`` in every snapshot."""
VERSION = 4
"""The on-disk format version this code writes (docs/sessions.md)."""
READABLE = (1, 2, 3, 4)
"""The versions it reads."""
META_KEY = "__agentnb__"
"""The snapshot key holding metadata; never a module name."""


REPEATS = "repeats"
"""The key, in a snapshot's metadata and in a log line, for where long texts were repeated
(``agentnb.sessions.repeats``)."""


SEGMENTS = "segments"
"""The key, in a snapshot's metadata, for the turns stored apart (``agentnb.sessions.segments``)."""


def meta(seq: int, repeats: list[Any] | None = None, segments: list[Any] | None = None) -> dict[str, Any]:
    info = {"format": FORMAT, "version": VERSION, "seq": seq, "saved_at": time.time()}
    if repeats:
        info[REPEATS] = repeats
    if segments:
        info[SEGMENTS] = segments
    return info


_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(obj: Any) -> str:
    """Compact JSON for lines, readable JSON is what ``jq`` is for.

    Text is written as UTF-8, except lone surrogates (which UTF-8 cannot hold; a model or a tool
    can produce them): they are written as ``\\udXXX`` escapes, which JSON reads back exactly.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if text.isascii():  # the usual case, checked far faster than by looking for surrogates
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class _NotJSON(ValueError):
    """NaN or an infinity in a session file: no JSON number, and never written by agentnb."""


def _no_constant(name: str) -> Any:
    raise _NotJSON(name)


def loads(text: str | bytes, where: str, fix: str) -> Any:
    """JSON from a session file; SessionFormatError naming ``where`` when it cannot be read
    (malformed, nested deeper than Python can follow, integers too long to convert, ``NaN`` or
    ``Infinity``, which are not JSON: agentnb stores such floats tagged, see ``codec``)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except _NotJSON as exc:
        raise SessionFormatError(
            f"{where} holds {exc}, which is not JSON (agentnb never writes it: the file was edited or "
            f"written by something else); {fix}"
        ) from None
    except json.JSONDecodeError as exc:
        raise SessionFormatError(
            f"{where} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); {fix}"
        ) from None
    except RecursionError:
        raise SessionFormatError(
            f"{where} is not a session: its JSON is nested too deeply to read; {fix}"
        ) from None
    except ValueError as exc:  # an integer longer than Python converts, or bytes that are not UTF-8
        raise SessionFormatError(f"{where} is not valid JSON ({str(exc).split(';')[0]}); {fix}") from None


def parse_snapshot(text: str, where: str) -> tuple[dict[str, Any], int]:
    """The module states and the seq of a snapshot's text; SessionFormatError when malformed."""
    modules, seq, _ = parse_snapshot_meta(text, where)
    return modules, seq


def parse_snapshot_meta(text: str, where: str) -> tuple[dict[str, Any], int, Any]:
    """``parse_snapshot`` and the snapshot's segments metadata as written (``[]`` if none)."""
    if not text.strip():
        raise SessionFormatError(f"{where} is empty; restore it from a backup or delete it to start fresh")
    data = loads(
        text, where, "the file may be truncated or edited by hand; fix it or delete it to start fresh"
    )
    if not isinstance(data, dict):
        raise SessionFormatError(
            f"{where} holds a JSON {type(data).__name__}; a session file is an object "
            f"{{module_name: state_dict}}"
        )
    info = data.pop(META_KEY, None)
    if info is None:  # written by AgentScope or by hand: plain {module: state_dict}
        return data, 0, []
    check_version(info, where)
    seq = info.get("seq", 0)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise SessionFormatError(f"{where}: {META_KEY}.seq must be a whole number of 0 or more, got {seq!r}")
    if REPEATS in info:
        restore_repeats(data, info[REPEATS], where)
    return data, seq, info.get(SEGMENTS, [])


def check_version(info: Any, where: str) -> None:
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        raise SessionFormatError(
            f"{where}: {META_KEY} must be {{'format': {FORMAT!r}, 'version': {VERSION}, ...}}, got {info!r}"
        )
    check_readable(info.get("version"), where)


def check_readable(version: Any, where: str) -> None:
    """SessionFormatError naming ``where`` unless this agentnb reads format ``version``: one
    from a newer agentnb says so (upgrade to read it), any other is damage."""
    if version in READABLE and not isinstance(version, bool):
        return
    readable = f"session format versions {READABLE[0]} to {READABLE[-1]}"
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise SessionFormatError(
            f"{where} was written by a newer agentnb (session format version {version}; this agentnb reads "
            f"{readable}): upgrade agentnb to a release that writes format {version} to read it; "
            "the file was left as it is"
        )
    raise SessionFormatError(
        f"{where} has session format version {version!r}, which no agentnb writes ({readable}); the file is damaged"
    )


def parse_line(raw: str | bytes, where: str) -> dict[str, Any]:
    line = loads(raw, where, "fix or remove that line (later lines are kept)")
    if not isinstance(line, dict) or not isinstance(line.get("seq"), int) or "op" not in line:
        raise SessionFormatError(f"{where} is not a session log entry (needs 'v', 'seq' and 'op')")
    check_readable(line.get("v"), where)
    if line["seq"] < 0 or isinstance(line["seq"], bool):
        raise SessionFormatError(
            f"{where} has seq {line['seq']!r}; a log line's seq is a whole number of 0 or more (the line was "
            f"edited or written by something else): fix or remove that line"
        )
    if line["op"] not in ("replace", "delta", "base"):
        raise SessionFormatError(f"{where} has unknown op {line['op']!r} (expected replace, delta or base)")
    return line


def apply_line(modules: dict[str, Any], line: dict[str, Any], where: str) -> None:
    """Replay one log line onto ``modules`` (in place)."""
    op = line["op"]
    if op == "base":
        return
    name = line.get("module")
    if not isinstance(name, str):
        raise SessionFormatError(f"{where}: entry without a module name")
    if op == "replace":
        modules[name] = line.get("state")
        return
    target = modules.get(name)
    if not isinstance(target, dict):
        raise SessionFormatError(f"{where}: a change to module {name!r}, which the session does not hold")
    modules[name] = apply_ops(target, line.get("ops") or [], where)


def apply_ops(target: dict[str, Any], ops: list[dict[str, Any]], where: str) -> dict[str, Any]:
    """Apply ``delta`` operations to a module's state dict, copying only along changed paths.

    ``{"op": "merge", "path": [...], "set": {k: v}, "unset": [k]}`` replaces top-level keys
    of the dict at ``path``; ``{"op": "splice", "path": [...], "keep": n, "append": [...]}``
    keeps the first ``n`` items of the list at ``path`` (all of them when ``keep`` is null) and
    appends the rest.
    """
    if not isinstance(ops, list):
        raise SessionFormatError(f"{where}: 'ops' must be a list of changes, got {type(ops).__name__}")
    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("path") or [], list):
            raise SessionFormatError(
                f"{where}: a change must be an object with a list 'path', got {op!r:.80}"
            )
        path = op.get("path") or []
        kind = op.get("op")
        try:
            target = _apply_at(target, list(path), op, kind)
        except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
            raise SessionFormatError(f"{where}: cannot apply {kind} at {path}: {exc}") from None
    return target


def _apply_at(node: Any, path: list[str], op: dict[str, Any], kind: Any) -> Any:
    if path:
        key = path[0]
        if not isinstance(node, dict):
            raise TypeError(f"{key!r} is inside a {type(node).__name__}, not an object")
        out = dict(node)
        out[key] = _apply_at(
            node.get(key, {} if kind == "merge" or len(path) > 1 else []), path[1:], op, kind
        )
        return out
    if kind == "merge":
        if not isinstance(node, dict):
            raise TypeError(f"merge needs an object, found {type(node).__name__}")
        changes, unset = op.get("set") or {}, op.get("unset") or []
        if not isinstance(changes, dict) or not isinstance(unset, list):
            raise TypeError("merge needs 'set' to be an object and 'unset' a list")
        out = dict(node)
        out.update(changes)
        for key in unset:
            out.pop(key, None)
        return out
    if kind == "splice":
        if not isinstance(node, list):
            raise TypeError(f"splice needs a list, found {type(node).__name__}")
        keep, append = op.get("keep"), op.get("append") or []
        if not isinstance(append, list):
            raise TypeError(f"append must be a list, got {type(append).__name__}")
        if keep is None:  # pure append: concurrent writers' items all stay
            return node + append
        if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
            raise TypeError(f"keep must be a whole number, got {keep!r}")
        return node[:keep] + append
    raise TypeError(f"unknown operation {kind!r}")
