"""Folding a session's log into a new snapshot: the pure part, which may run in another process.

A fold parses the snapshot and the log read under the lock, replays the log, stores a long
history's older turns apart (``segments.py``) and encodes the new snapshot. That is all CPU
work on data nobody else holds, so ``fold`` takes only what it needs (the backend's ``parse``,
a picklable callable, and the credentials to redact) and returns text: the background fold
runs it in a child process (``worker.py``) so that the turns saved meanwhile never wait for
this interpreter, and writes what it returns under the lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from . import format as fmt
from . import segments as seg
from .repeats import drop_repeats, restore_repeats


class Read(NamedTuple):
    """What a backend's ``_read`` found."""

    modules: dict[str, Any]
    """The snapshot's ``{module: state_dict}`` as parsed."""
    seq: int
    """The snapshot's seq."""
    entries: Iterator[tuple[dict[str, Any], str]]
    """The log entries after it, each with where it was read (for errors)."""
    tagged: bool
    """Whether the text read holds ``codec.TAG``: only then do values need decoding."""
    segments: tuple[dict[str, Any], ...] | list[dict[str, Any]] = ()
    """The snapshot's segments of turns stored apart (``segments.py``)."""
    blobs: Mapping[str, Any] = {}
    """The images and files the text read refers to, ``{sha256: blobs.Ref}`` (``blobs.py``)."""


class Modules(NamedTuple):
    """A session's modules as stored: the snapshot with the log applied."""

    modules: dict[str, Any]
    seq: int
    """The last seq applied."""
    tagged: bool
    """Whether values need ``codec.decode`` (some were stored encoded)."""
    segments: list[dict[str, Any]]
    """Turns stored apart from ``modules`` (``segments.py``), not yet read (a fold adds to it)."""
    blobs: Mapping[str, Any] = {}
    """The images and files the snapshot and log refer to, ``{sha256: blobs.Ref}``; those of
    the segments are read with them."""


class Folded(NamedTuple):
    """A fold's result: what to write, under the lock, if the files changed only by appends."""

    text: str
    """The new snapshot."""
    seq: int
    """The last seq it holds."""
    segments: list[dict[str, Any]]
    """Every segment it names (those it found and those it made)."""
    made: list[tuple[str, str]]
    """``(key, text)`` of each segment it made, to be written before (or with) the snapshot."""


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each of ``secrets`` replaced by ``[redacted]``."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return text


def snapshot_text(
    modules: dict[str, Any], seq: int, segments: list[dict[str, Any]] | None, secrets: Sequence[str]
) -> str:
    """A snapshot as written: each long text once (``repeats``), credentials redacted."""
    modules, repeats = drop_repeats(modules)
    return redact(fmt.dumps({fmt.META_KEY: fmt.meta(seq, repeats, segments), **modules}), secrets)


def fold(parse: Callable[[], Read], layout: tuple[int, int] | None, secrets: Sequence[str]) -> Folded:
    """The snapshot ``parse``'s text folds into, and the segments it stores apart when
    ``layout`` gives ``(segments.SPLIT_AT, segments.RECENT)`` (passed: the fold may run in a
    process of its own)."""
    found = apply_log(parse())
    made = []
    if layout is not None:
        pieces = seg.split(found.modules, found.segments, *layout)
        made = [(info["key"], redact(seg.document_text(document), secrets)) for info, document in pieces]
    return Folded(
        snapshot_text(found.modules, found.seq, found.segments, secrets), found.seq, found.segments, made
    )


def apply_log(raw: Read) -> Modules:
    """The snapshot ``raw`` holds with its log entries replayed onto it."""
    modules, seq, segments = raw.modules, raw.seq, list(raw.segments)
    if segments:
        seg.expand_bases(modules, "the session's snapshot")
    for line, where in raw.entries:
        if line["seq"] <= seq:
            continue
        if fmt.REPEATS in line:
            restore_repeats(line, line.pop(fmt.REPEATS), where)
        if segments:
            line = seg.adjust_line(line, segments, where)
        _apply_read_line(modules, line, where)
        seq = line["seq"]
    return Modules(modules, seq, raw.tagged, segments, raw.blobs)


def _apply_read_line(modules: dict[str, Any], line: dict[str, Any], where: str) -> None:
    """Replay one log line onto modules just read (``_read`` hands over data nobody else holds):
    in place when its ops are the usual merges and splices into containers that exist, so a
    long log replays without copying a module's dicts and lists line after line; anything
    else goes through ``format.apply_line``, which copies and names what is wrong."""
    if line.get("op") == "delta":
        module, ops = line.get("module"), line.get("ops")
        target = modules.get(module) if isinstance(module, str) else None
        if isinstance(target, dict) and isinstance(ops, list):
            places = _places(target, ops)
            if places is not None:
                _apply_in_place(ops, places)
                return
    fmt.apply_line(modules, line, where)


def _apply_in_place(ops: list[dict[str, Any]], places: list[Any]) -> None:
    """Apply merges and splices that ``_places`` found well formed to their containers."""
    for op, place in zip(ops, places):
        if op["op"] == "merge":
            place.update(op.get("set") or {})
            for key in op.get("unset") or ():
                place.pop(key, None)
        else:
            if op.get("keep") is not None:
                del place[op["keep"] :]
            place.extend(op.get("append") or ())


def _places(target: dict[str, Any], ops: list[Any]) -> list[Any] | None:
    """The container each op changes, when every op is well formed, its container exists, and
    no op replaces a container a later op changes; else None."""
    places = []
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or not isinstance(op.get("path"), list):
            return None
        node: Any = target
        for key in op["path"]:
            node = node.get(key) if isinstance(node, dict) and isinstance(key, str) else None
        kind = op.get("op")
        if kind == "merge":
            changes, unset = op.get("set") or {}, op.get("unset") or []
            if not (isinstance(node, dict) and isinstance(changes, dict) and isinstance(unset, list)):
                return None
            depth, touched = len(op["path"]), {*changes, *unset}
            if any(
                later.get("path", [])[:depth] == op["path"]
                and len(later.get("path", [])) > depth
                and later["path"][depth] in touched
                for later in ops[i + 1 :]
                if isinstance(later, dict)
            ):
                return None
        elif kind == "splice":
            keep, append = op.get("keep"), op.get("append") or []
            if not (isinstance(node, list) and isinstance(append, list)):
                return None
            if keep is not None and (type(keep) is not int or keep < 0):
                return None
        else:
            return None
        places.append(node)
    return places
