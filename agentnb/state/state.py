"""State: one object for Agno's free ``session_state`` dict and Haystack's typed ``State``.

Without a schema the state is a plain dict that tools may mutate in place. With a schema every
key is declared with a type and a merge handler (``merge_lists`` for lists, ``replace_values``
otherwise), values are type-checked, and keys outside the schema are rejected. The conversation
(``messages``) is always available under the ``messages`` key but is kept apart from the data
dict, so it never appears in the ``<session_state>`` block of the prompt.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import types
import typing
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Union

from ..errors import StateKeyError, StateSchemaError, StateTypeError
from ..messages import Message
from ..util.text import shorten
from .frozen import FrozenMap, freeze, same
from .journal import Journal, track, tracked_copy
from .modules import load_registered, register_state, registered_state
from .refreeze import reorder, update_along
from .serialization import (
    callable_to_str,
    import_dotted,
    type_from_str,
    type_to_str,
    value_from_data,
    value_to_data,
)

Handler = Callable[[Any, Any], Any]

MESSAGES_KEY = "messages"


def merge_lists(current: Any, new: Any) -> list[Any]:
    """Append ``new`` to ``current``; either side may be a scalar or None (Haystack's rule)."""
    current_list = [] if current is None else current if isinstance(current, list) else [current]
    new_list = new if isinstance(new, list) else [new]
    return current_list + new_list


def replace_values(current: Any, new: Any) -> Any:
    """Replace the old value with the new one."""
    return new


def deep_merge(current: Any, new: Any) -> Any:
    """``new`` over ``current``; where both are dicts, key by key (recursively)."""
    if isinstance(current, dict) and isinstance(new, dict):
        return {**current, **{k: deep_merge(current.get(k), v) for k, v in new.items()}}
    return new


def type_name(tp: Any) -> str:
    """A readable name for a type or type expression (``list[str]``, ``int | None``)."""
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _is_list_type(tp: Any) -> bool:
    return tp is list or typing.get_origin(tp) is list


def _is_type_expression(tp: Any) -> bool:
    if isinstance(tp, type) or tp is Any:
        return True
    origin = typing.get_origin(tp)
    if origin is None:
        return False
    if origin in (Union, types.UnionType) or isinstance(origin, type):
        return all(_is_type_expression(a) or a is Ellipsis for a in typing.get_args(tp))
    return origin is typing.Literal


def value_fits(value: Any, tp: Any) -> bool:
    """Whether ``value`` conforms to the type expression ``tp`` (checked recursively)."""
    if tp is Any or tp is object:
        return True
    origin = typing.get_origin(tp)
    if origin is None:
        if tp is float:
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if tp is int:
            return isinstance(value, int) and not isinstance(value, bool)
        if tp is type(None):
            return value is None
        return isinstance(value, tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return any(value_fits(value, a) for a in args)
    if origin is typing.Literal:
        return value in args
    if origin in (list, set, frozenset):
        return isinstance(value, origin) and (not args or all(value_fits(v, args[0]) for v in value))
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(value_fits(v, args[0]) for v in value)
        return not args or (len(args) == len(value) and all(map(value_fits, value, args)))
    if origin is dict:
        if not isinstance(value, dict):
            return False
        if not args:
            return True
        return all(value_fits(k, args[0]) and value_fits(v, args[1]) for k, v in value.items())
    return isinstance(value, origin)


def _describe(value: Any) -> str:
    if isinstance(value, list) and value:
        inner = sorted({type(v).__name__ for v in value})
        return f"list[{' | '.join(inner)}]"
    return type(value).__name__


@dataclasses.dataclass(frozen=True)
class SchemaEntry:
    """A key of a state schema: its type and merge handler."""

    type: Any
    """The declared type (a type or a type expression such as ``list[str]``)."""
    handler: Handler
    """How a new value merges with the current one."""


def normalize_schema(schema: Mapping[str, Any] | None) -> dict[str, SchemaEntry] | None:
    """Check a user schema ``{key: {"type": T, "handler": fn?}}`` and fill in default handlers."""
    if schema is None:
        return None
    if not isinstance(schema, Mapping):
        raise StateSchemaError(
            f"state_schema must be a dict of {{key: {{'type': T}}}}, got {type(schema).__name__}"
        )
    out: dict[str, SchemaEntry] = {}
    for key, spec in schema.items():
        if not isinstance(key, str):
            raise StateSchemaError(f"state_schema keys must be strings, got {key!r}")
        if isinstance(spec, SchemaEntry):
            out[key] = spec
            continue
        if not isinstance(spec, Mapping) or "type" not in spec:
            raise StateSchemaError(
                f"state_schema[{key!r}] must be a dict with a 'type' entry, e.g. {{'type': list}}; "
                f"got {spec!r}"
            )
        unknown = set(spec) - {"type", "handler"}
        if unknown:
            raise StateSchemaError(
                f"state_schema[{key!r}] has unknown entries {sorted(unknown)}; allowed: 'type', 'handler'"
            )
        tp = spec["type"]
        if not _is_type_expression(tp):
            raise StateSchemaError(
                f"state_schema[{key!r}]['type'] must be a type such as str, list[int] or "
                f"Optional[str]; got {tp!r}"
            )
        handler = spec.get("handler")
        if handler is None:
            handler = merge_lists if _is_list_type(tp) else replace_values
        elif not callable(handler):
            raise StateSchemaError(
                f"state_schema[{key!r}]['handler'] must be a function (current, new) -> merged; "
                f"got {handler!r}"
            )
        out[key] = SchemaEntry(type=tp, handler=handler)
    if MESSAGES_KEY not in out:
        out[MESSAGES_KEY] = SchemaEntry(type=list[Message], handler=merge_lists)
    return out


class State:
    """Shared state of an agent's runs: typed when a schema is given, a free dict otherwise.

    ``State(schema=None, data=None)``. ``get`` hands out deep copies; ``data`` is the live dict
    (what tools receive as ``session_state``).
    """

    __agentnb_inject__ = "state"
    """A tool parameter annotated ``State`` receives the live state (tools.schema.INJECT_MARKER)."""

    def __init__(
        self,
        schema: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        self._schema = normalize_schema(schema)
        self._journal = Journal()
        self._data: dict[str, Any] = self._journal.root
        self._messages: list[Message] = []
        for key, value in copy.deepcopy(dict(data or {})).items():
            if key == MESSAGES_KEY:
                self._messages = [_as_message(m) for m in value]
                continue
            self._check_key(key)
            self._check_type(key, value)
            self._data[key] = track(value, self._journal, owned=True)

    @property
    def schema(self) -> dict[str, dict[str, Any]]:
        """The schema with defaults filled in (always has ``messages``); {} when schemaless."""
        if self._schema is None:
            return {MESSAGES_KEY: {"type": list[Message], "handler": merge_lists}}
        return {k: {"type": e.type, "handler": e.handler} for k, e in self._schema.items()}

    @property
    def has_schema(self) -> bool:
        return self._schema is not None

    @property
    def data(self) -> dict[str, Any]:
        """The live state dict, without ``messages``. Mutations here change the state."""
        return self._data

    @property
    def journal(self) -> Journal:
        """What was written in ``data`` since the last checkpoint (see ``agentnb.state.journal``)."""
        return self._journal

    def frozen(self, *, consume: bool = False) -> FrozenMap:
        """A frozen copy of the data now, sharing what did not change with the copy of the
        last checkpoint (``journal.image``). ``consume``: it becomes that copy, and what was
        written since counts as checkpointed (nothing is reported for it)."""
        journal = self._journal
        if journal.image is None:
            journal.image = freeze(self._data)
            journal.written(consume=True)
            return journal.image
        written = journal.written(consume=consume)
        image = journal.image
        if written.paths is not None:
            image = reorder(
                update_along(image, self._data, written.paths), image, self._data, written.inserted
            )
        if consume:
            journal.image = image
        return image

    @property
    def messages(self) -> list[Message]:
        """The conversation so far (live list)."""
        return self._messages

    def get(self, key: str, default: Any = None) -> Any:
        """A deep copy of the value under ``key``, or ``default``."""
        if key == MESSAGES_KEY:
            return list(self._messages) if self._messages else default
        if key not in self._data:
            return default
        return copy.deepcopy(self._data[key])

    def has(self, key: str) -> bool:
        """Whether ``key`` holds a value (``messages`` once the conversation has begun)."""
        return bool(self._messages) if key == MESSAGES_KEY else key in self._data

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.has(key)

    def set(self, key: str, value: Any, handler_override: Handler | None = None) -> None:
        """Merge ``value`` into ``key`` with the key's handler (or ``handler_override``)."""
        if key == MESSAGES_KEY:
            if handler_override is None or handler_override is merge_lists:
                # Appending is the common case: convert only what is new, not the whole history.
                self._messages.extend(_as_message(m) for m in merge_lists([], value))
                return
            self._messages = [_as_message(m) for m in handler_override(self._messages, value)]
            return
        self._check_key(key)
        handler = handler_override or self.handler_for(key)
        merged = handler(self._data.get(key), value)
        self._check_type(key, merged)
        self._data[key] = merged

    def handler_for(self, key: str) -> Handler:
        if self._schema is None:
            return replace_values
        return self._schema[key].handler

    def validate(self, keys: typing.Iterable[str] | None = None) -> None:
        """Re-check keys (all by default) against the schema, e.g. after in-place mutation."""
        for key in self._data if keys is None else keys:
            if key in self._data:
                self._check_key(key)
                self._check_type(key, self._data[key])

    def merge_data(self, updates: Mapping[str, Any]) -> None:
        """Deep-merge ``updates`` into the data (Agno's run ``session_state``): their keys win,
        nested dicts merge key by key; each changed key is set whole (checked by the schema)."""
        for key, value in copy.deepcopy(dict(updates)).items():
            self.set(key, deep_merge(self._data.get(key), value), handler_override=replace_values)

    def check_data(self, data: Mapping[str, Any]) -> None:
        """Check ``data`` against the schema as ``replace_data`` would, changing nothing."""
        for key, value in data.items():
            self._check_key(key)
            self._check_type(key, value)

    def replace_data(self, data: Mapping[str, Any]) -> None:
        """Replace all data (not the messages) after checking it against the schema."""
        new = dict(data)
        self.check_data(new)
        self._data.clear()
        self._data.update(new)

    def load_data(self, data: Mapping[str, Any], image: FrozenMap | None = None) -> None:
        """Replace all data (not the messages) with a copy of ``data`` after checking it against
        the schema. ``image``: a frozen state that ``data`` may equal (the last turn's, when a
        session is loaded); when it does, it becomes the last checkpoint's copy, shared."""
        self.check_data(data)
        journal = self._journal
        self._data.clear()
        self._data.update({k: tracked_copy(v, journal) for k, v in data.items()})
        if image is not None and same(image, data):
            journal.written(consume=True)
            journal.image = image

    def to_dict(self, skip_keys: typing.Iterable[str] = ()) -> dict[str, Any]:
        """The schema and the data as plain data, in Haystack's shape: ``{"schema": {key:
        {"type": "list[str]", "handler": "module.function"}}, "data": {"serialization_schema":
        ..., "serialized_data": ...}}`` (``"schema": None`` without one). A value that cannot be
        written is left out with a warning; ``skip_keys`` are left out of both."""
        skip = set(skip_keys)
        schema = None
        if self._schema is not None:
            schema = {
                k: {
                    "type": type_to_str(e.type),
                    "handler": callable_to_str(e.handler, f"the handler of state key {k!r}"),
                }
                for k, e in self._schema.items()
                if k not in skip
            }
        values = dict(self._data)
        if self._messages:
            values[MESSAGES_KEY] = list(self._messages)
        properties: dict[str, Any] = {}
        serialized: dict[str, Any] = {}
        for key, value in values.items():
            if key in skip:
                continue
            try:
                properties[key], serialized[key] = value_to_data(value)
            except TypeError as exc:
                warnings.warn(f"State.to_dict: state key {key!r} left out: {exc}", stacklevel=2)
        data = {
            "serialization_schema": {"type": "object", "properties": properties},
            "serialized_data": serialized,
        }
        return {"schema": schema, "data": data}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> State:
        """The State ``to_dict`` wrote (imports the types and handlers it names: trusted data only)."""
        raw_schema = data.get("schema")
        schema = None
        if raw_schema is not None:
            schema = {
                k: {"type": type_from_str(spec["type"]), "handler": import_dotted(spec["handler"])}
                for k, spec in raw_schema.items()
            }
        values = data.get("data") or {}
        return cls(
            schema,
            value_from_data(values.get("serialization_schema") or {}, values.get("serialized_data") or {}),
        )

    def register_state(
        self, attr_name: str, custom_to_json: Any = None, custom_from_json: Any = None
    ) -> None:
        """Also save ``self.<attr_name>`` in sessions (AgentScope's ``register_state``)."""
        register_state(self, attr_name, custom_to_json, custom_from_json)

    def state_dict(self) -> dict[str, Any]:
        """The data and the conversation, for sessions (values as they are, not copied)."""
        out = {"data": dict(self._data), "messages": [m.to_dict() for m in self._messages]}
        extra = registered_state(self)
        if extra:
            out["registered"] = extra
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> None:
        """Restore what ``state_dict()`` returned (checked against the schema)."""
        self.load_data(dict(state_dict.get("data") or {}))
        self._messages[:] = [Message.from_dict(m) for m in state_dict.get("messages") or []]
        load_registered(self, dict(state_dict.get("registered") or {}), strict)

    def __repr__(self) -> str:
        keys = ", ".join(self._data)
        kind = "typed" if self._schema is not None else "free"
        return f"State({kind}; keys: {keys or '-'}; {len(self._messages)} messages)"

    def _check_key(self, key: str) -> None:
        if self._schema is not None and key not in self._schema:
            allowed = ", ".join(k for k in self._schema if k != MESSAGES_KEY) or "(none)"
            raise StateKeyError(
                f"Key {key!r} not found in schema (declared keys: {allowed}); "
                f"add it to state_schema or use a declared key"
            )

    def _check_type(self, key: str, value: Any) -> None:
        if self._schema is None:
            return
        expected = self._schema[key].type
        if value is not None and not value_fits(value, expected):
            raise StateTypeError(
                f"state key {key!r} expects {type_name(expected)}, got {_describe(value)}: "
                f"{_short_repr(value)}"
            )


def _short_repr(value: Any, limit: int = 80) -> str:
    return shorten(repr(value), limit)


def _as_message(value: Any) -> Message:
    if isinstance(value, Message):
        return value
    if isinstance(value, Mapping):
        return Message.from_openai(dict(value))
    raise StateTypeError(f"state key 'messages' holds chat messages, got {type(value).__name__}")


def render_state(data: Mapping[str, Any], fmt: str = "repr") -> str:
    """The state as shown in the ``<session_state>`` block: Python ``str()`` (Agno) or JSON."""
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, default=str, indent=2)
    return str(dict(data) if not isinstance(data, dict) else data)
