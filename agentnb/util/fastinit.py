"""A faster ``__init__`` for the frozen dataclasses made on every turn (events, messages, model
requests and responses).

The ``__init__`` that ``@dataclass(frozen=True)`` writes sets each field with
``object.__setattr__(self, name, value)``, to get past the class's own ``__setattr__``, which
refuses. That call costs about three times a plain attribute store, and a turn builds some fifty
such objects. ``fast_init(cls)`` gives the class an ``__init__`` with the same signature (the
same names, order, defaults, keyword-only marker and default factories) that writes the fields
into the instance's ``__dict__`` instead, then calls ``__post_init__`` if there is one. Nothing
else changes: the instance is still frozen (assigning a field raises ``FrozenInstanceError``),
and equality, hashing and ``repr`` are the dataclass's. A class it cannot do this for (slots,
init-only variables) keeps the dataclass's own ``__init__``.

Where the fields go is the one choice. By default into the ``__dict__`` that CPython makes of
the instance's inline values on first use: the cheapest to build, but CPython 3.11 does not
specialize attribute reads from such a dict, so each read costs about four times a plain one.
``@fast_init(read_often=True)`` is for a class whose instances are read many times each (a
message, a model request or response, a run's prepared prompt): its ``__init__`` gives the
instance a dict of its own, built in one step, which reads are specialized for; a little more
to build, cheaper from about the fifth read on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")

_FACTORY = object()
"""The default of a parameter whose field has a default factory: the factory is called."""

MADE_FAST: list[type] = []
"""Every class given the faster ``__init__`` (the tests compare each with the dataclass's own)."""


@overload
def fast_init(cls: type[T], /) -> type[T]: ...


@overload
def fast_init(*, read_often: bool = False) -> Callable[[type[T]], type[T]]: ...


def fast_init(cls: type[T] | None = None, /, *, read_often: bool = False) -> Any:
    """Give the frozen dataclass ``cls`` an ``__init__`` that stores fields without
    ``object.__setattr__`` (see the module's text); returns ``cls``. ``read_often``: the
    instance gets a dict of its own (for a class read many times per instance)."""
    if cls is None:
        return lambda made: _fast_init(made, read_often)
    return _fast_init(cls, read_often)


def _fast_init(cls: type[T], read_often: bool) -> type[T]:
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"fast_init takes a frozen dataclass; {cls.__qualname__} is not one")
    fields = dataclasses.fields(cls)
    initvar = getattr(dataclasses, "_FIELD_INITVAR", None)
    pseudo = [f for f in cls.__dataclass_fields__.values() if getattr(f, "_field_type", initvar) is initvar]
    if "__slots__" in cls.__dict__ or initvar is None or pseudo:
        return cls
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for field in fields:
        name = field.name
        value = name
        if field.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = field.default
            param = f"{name}=_default_{name}"
            if not field.init:
                continue  # read from the class attribute, as with the dataclass's __init__
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = field.default_factory
            param = f"{name}=_FACTORY"
            value = (
                f"_factory_{name}() if {name} is _FACTORY else {name}" if field.init else f"_factory_{name}()"
            )
        else:
            param = name
            if not field.init:
                continue  # no default: the dataclass's __init__ leaves it unset too
        if field.init:
            (keyword if field.kw_only else positional).append(param)
        body.append(f"{name!r}: {value}" if read_often else f"    _d[{name!r}] = {value}")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    if read_often:
        namespace["_set"] = object.__setattr__
        lines = [f"def __init__({signature}):", f"    _set(self, '__dict__', {{{', '.join(body)}}})"]
    else:
        lines = [f"def __init__({signature}):", "    _d = self.__dict__", *body]
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    exec("\n".join(lines), namespace)  # noqa: S102 - source built above from the field names only
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    init.__wrapped_dataclass_init__ = cls.__init__
    cls.__init__ = init  # type: ignore[method-assign]  # the fast __init__ replaces the dataclass's
    MADE_FAST.append(cls)
    if not hasattr(cls, "__post_init__") and all(f.init for f in fields):
        _PLAIN_COPY.add(cls)
    return cls


def evolve(obj: T, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)`` for an instance of a class ``fast_init`` made fast
    whose fields are all set by ``__init__`` and that has no ``__post_init__``: a copy of its
    fields with ``changes`` written over them, without calling ``__init__`` again. Other classes
    go through ``dataclasses.replace``."""
    cls = type(obj)
    if cls not in _PLAIN_COPY:
        return dataclasses.replace(obj, **changes)
    fields = cls.__dataclass_fields__
    for name in changes:
        if name not in fields:
            raise TypeError(f"{cls.__qualname__}.__init__() got an unexpected keyword argument {name!r}")
    new = object.__new__(cls)
    object.__setattr__(new, "__dict__", {**obj.__dict__, **changes})  # (its own dict: read_often's)
    return new


_PLAIN_COPY: set[type] = set()
"""Classes ``evolve`` copies without ``__init__`` (set by ``fast_init``)."""


__all__ = ["MADE_FAST", "evolve", "fast_init"]
