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
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")

_FACTORY = object()
"""The default of a parameter whose field has a default factory: the factory is called."""

MADE_FAST: list[type] = []
"""Every class given the faster ``__init__`` (the tests compare each with the dataclass's own)."""


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen dataclass ``cls`` an ``__init__`` that stores fields without
    ``object.__setattr__`` (see the module's text); returns ``cls``."""
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
        body.append(f"    _d[{name!r}] = {value}")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
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
    values = new.__dict__
    values.update(obj.__dict__)
    values.update(changes)
    return new


_PLAIN_COPY: set[type] = set()
"""Classes ``evolve`` copies without ``__init__`` (set by ``fast_init``)."""


__all__ = ["MADE_FAST", "evolve", "fast_init"]
