"""State modules: the protocol sessions save and load through (AgentScope's ``StateModule``).

Any object with ``state_dict()`` and ``load_state_dict(state_dict, strict=True)`` can be saved in
a session. ``register_state(obj, "attr")`` adds an attribute to what an object saves; the
``StateModule`` base class gives user classes that method. Agent, State, Toolkit and History
implement the protocol themselves; sessions never need to know which kind of module they hold.

A module may also save by *delta*, so a session writes what changed rather than the whole state:

- ``module.state_cursor()`` returns an opaque value describing what was just stored (called
  after a save or a load); ``state_cursor(empty=True)`` describes nothing stored yet, so that
  the first delta holds everything (a session that another process created after this module
  found it empty gets this module's turns appended, not replaced);
- ``module.state_delta(cursor)`` returns ``(ops, new_cursor)`` for what changed since, or None
  when only a whole save will do. The session keeps ``new_cursor`` once the ops are on disk.

Ops are plain dicts, built with ``merge`` and ``splice`` below; values are the module's own
(the session encodes them).

A module may also load in two steps, so that a session loading several modules at once changes
none of them when one cannot be loaded: ``module.prepare_state_dict(state)`` checks ``state`` and
raises as ``load_state_dict`` would, changing nothing, and returns a function that loads it.
A module without it is loaded with ``load_state_dict`` and put back from its ``state_dict()``
when a module loaded after it fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeGuard

_REGISTRY_ATTR = "_agentnb_registered_state"


def register_state(
    obj: Any,
    attr_name: str,
    custom_to_json: Callable[[Any], Any] | None = None,
    custom_from_json: Callable[[Any], Any] | None = None,
) -> None:
    """Save ``obj.<attr_name>`` with the object's state (AgentScope's ``register_state``)."""
    if not isinstance(attr_name, str) or not attr_name.isidentifier():
        raise ValueError(f"register_state needs an attribute name, got {attr_name!r}")
    if not hasattr(obj, attr_name):
        raise AttributeError(
            f"{type(obj).__name__} has no attribute {attr_name!r}; set it before register_state"
        )
    value = getattr(obj, attr_name)
    if custom_to_json is None and not is_state_module(value):
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"Attribute {attr_name!r} is not JSON serializable. Please provide a custom function to convert "
                f"it to and from JSON: register_state({attr_name!r}, custom_to_json=..., custom_from_json=...)"
            ) from None
    registry = obj.__dict__.setdefault(_REGISTRY_ATTR, {})
    registry[attr_name] = (custom_to_json, custom_from_json)


def registered_state(obj: Any) -> dict[str, Any]:
    """The registered attributes' values (nested state modules as their state_dict)."""
    out: dict[str, Any] = {}
    for name, (to_json, _) in obj.__dict__.get(_REGISTRY_ATTR, {}).items():
        if not hasattr(obj, name):
            continue  # deleted since: no longer part of the state
        value = getattr(obj, name)
        if to_json is not None:
            value = to_json(value)
        elif is_state_module(value):
            value = value.state_dict()
        out[name] = value
    return out


def check_registered(obj: Any, data: dict[str, Any], strict: bool = True) -> None:
    """Check that ``data`` holds every registered attribute of ``obj`` (with ``strict``), as
    ``load_registered`` would, changing nothing."""
    if not strict:
        return
    for name in obj.__dict__.get(_REGISTRY_ATTR, {}):
        if name not in data:
            raise KeyError(
                f"the saved state of {type(obj).__name__} has no {name!r}; it has {sorted(data)} "
                f"(pass strict=False to keep the current value)"
            )


def load_registered(obj: Any, data: dict[str, Any], strict: bool = True) -> None:
    """Put saved values back into the registered attributes of ``obj``."""
    check_registered(obj, data, strict)
    registry = obj.__dict__.get(_REGISTRY_ATTR, {})
    for name, (_, from_json) in registry.items():
        if name not in data:
            continue
        value = data[name]
        current = getattr(obj, name, None)
        if from_json is not None:
            setattr(obj, name, from_json(value))
        elif is_state_module(current):
            current.load_state_dict(value)
        else:
            setattr(obj, name, value)


class Stateful(Protocol):
    """What a session saves and loads an attribute through (a StateModule, or anything shaped so)."""

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any], /) -> Any: ...


def is_state_module(value: Any) -> TypeGuard[Stateful]:
    """Whether ``value`` has ``state_dict()`` and ``load_state_dict()``."""
    return callable(getattr(value, "state_dict", None)) and callable(getattr(value, "load_state_dict", None))


class StateModule:
    """Base for user classes saved in sessions (AgentScope's ``StateModule``): call
    ``self.register_state("attr")``; attributes holding another StateModule are saved and
    loaded with it under their attribute name."""

    def register_state(
        self,
        attr_name: str,
        custom_to_json: Callable[[Any], Any] | None = None,
        custom_from_json: Callable[[Any], Any] | None = None,
    ) -> None:
        register_state(self, attr_name, custom_to_json, custom_from_json)

    def _nested(self) -> dict[str, StateModule]:
        registered = self.__dict__.get(_REGISTRY_ATTR, {})
        return {k: v for k, v in vars(self).items() if isinstance(v, StateModule) and k not in registered}

    def state_dict(self) -> dict[str, Any]:
        """The nested modules' state and the registered attributes."""
        return {**{k: v.state_dict() for k, v in self._nested().items()}, **registered_state(self)}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        """Restore what ``state_dict()`` returned (``strict``: every key must be there)."""
        for name, module in self._nested().items():
            if name in state_dict:
                module.load_state_dict(state_dict[name], strict)
            elif strict:
                raise KeyError(
                    f"the saved state of {type(self).__name__} has no {name!r}; it has {sorted(state_dict)} "
                    f"(pass strict=False to keep the current value)"
                )
        load_registered(self, state_dict, strict)

    def __delattr__(self, name: str) -> None:
        self.__dict__.get(_REGISTRY_ATTR, {}).pop(name, None)
        super().__delattr__(name)


def merge(path: Iterable[str], set: dict[str, Any], unset: Iterable[str] = ()) -> dict[str, Any]:
    """Op: in the dict at ``path``, set the keys of ``set`` and delete those in ``unset``."""
    return {"op": "merge", "path": list(path), "set": set, "unset": list(unset)}


def splice(path: Iterable[str], append: list[Any], keep: int | None = None) -> dict[str, Any]:
    """Op: keep the first ``keep`` items of the list at ``path`` (all when None), then append."""
    return {"op": "splice", "path": list(path), "keep": keep, "append": append}


__all__ = [
    "StateModule",
    "check_registered",
    "is_state_module",
    "load_registered",
    "merge",
    "register_state",
    "registered_state",
    "splice",
]
