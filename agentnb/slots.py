"""Extension slots: every place where a layer above plugs into a layer below, in one module.

The core never imports the notebook layer, evaluation or tracing; where it needs them it reads a
slot here. A slot is filled in one of two ways, both visible in this file:

- by a call of the layer above when it is switched on (``%load_ext agentnb`` fills the notebook's
  slots; ``agentnb.tracing.instrument()`` adds its observer);
- or, for a slot with a ``provider``, on first use: the provider is a ``module:name`` path that is
  imported then, so ``agent.evaluate(...)`` works without importing ``agentnb.evals`` first, and
  ``import agentnb`` stays light.

Nothing is filled by importing a module for its side effects.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")


class MarkdownDisplay(Protocol):
    """Shows an answer as markdown (``print_response(markdown=True)`` in a notebook)."""

    def __call__(self, text: str, /) -> None: ...


class Evaluate(Protocol):
    """Runs an evaluation of an agent over cases (``agent.evaluate``)."""

    def __call__(self, agent: Any, cases: Any, checks: Any = (), /, **options: Any) -> Any: ...


class MapItems(Protocol):
    """Runs an agent once per item and returns a DataFrame of the outputs (``agent.map``)."""

    def __call__(self, agent: Any, items: Any, /, **options: Any) -> Any: ...


class EvalDisplay(Protocol):
    """Makes the live view of a running evaluation: ``(name, total) -> sink`` with
    ``update(progress)``, ``plan(text)`` and ``close(run)``."""

    def __call__(self, name: str, total: int, /) -> Any: ...


class CaseInspector(Protocol):
    """Shows one case of an evaluation (a run, or a comparison of two) in an inspector
    (``run.inspect(case_id)``)."""

    def __call__(self, target: Any, case_id: str, repeat: int, /) -> Any: ...


class AgentObserver(Protocol):
    """Receives every event of every agent, with the agent (tracing's observer)."""

    def __call__(self, agent: Any, event: Any, /) -> Any: ...


class EvaluationObserver(Protocol):
    """Around each (case, repeat) an evaluation runs, on its thread: entered before the case
    runs; what it gives is called with the case's scored row (tracing's case spans)."""

    def __call__(self, evaluation: Any, case_id: str, repeat: int, /) -> Any: ...


class Switch(Protocol):
    """Switches a layer on (tracing, when an agent is given a tracer provider)."""

    def __call__(self) -> None: ...


class Slot(Generic[T]):
    """One named extension point holding at most one implementation."""

    def __init__(self, name: str, doc: str, provider: str | None = None) -> None:
        self.name = name
        self.__doc__ = doc
        self.provider = provider
        """``module:name`` imported on first use when nothing filled the slot."""
        self._value: T | None = None

    def fill(self, value: T) -> None:
        """Put ``value`` in the slot (replacing what was there)."""
        self._value = value

    def clear(self) -> None:
        """Empty the slot (its provider, if any, fills it again on next use)."""
        self._value = None

    def get(self) -> T | None:
        """What fills the slot: the value put there, else the provider's, else None."""
        if self._value is None and self.provider is not None:
            module, _, attr = self.provider.partition(":")
            self._value = getattr(importlib.import_module(module), attr)
        return self._value

    def __repr__(self) -> str:
        return f"Slot({self.name!r}, filled={self._value is not None})"


class Observers(Generic[T]):
    """A named extension point holding any number of implementations, called in order."""

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc
        self.items: tuple[T, ...] = ()
        """The implementations, in order: a tuple replaced on change, so a run reads a snapshot
        (read it directly where every event passes; change it with ``add`` / ``remove``)."""
        self._lock = threading.Lock()

    def add(self, item: T) -> None:
        """Add ``item`` once (adding it again does nothing)."""
        with self._lock:
            if item not in self.items:
                self.items = (*self.items, item)

    def remove(self, item: T) -> None:
        """Remove ``item`` if it is there."""
        with self._lock:
            self.items = tuple(i for i in self.items if i != item)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __repr__(self) -> str:
        return f"Observers({self.name!r}, {len(self.items)})"


markdown_display: Slot[MarkdownDisplay] = Slot(
    "markdown_display",
    "Shows ``print_response(markdown=True)`` as markdown; filled by ``%load_ext agentnb``.",
)
evaluate: Slot[Evaluate] = Slot(
    "evaluate",
    "What ``agent.evaluate`` / ``team.evaluate`` call: agentnb.evals' driver, imported on first use.",
    provider="agentnb.evals:evaluate",
)
map_items: Slot[MapItems] = Slot(
    "map_items",
    "What ``agent.map`` calls: agentnb.evals' mapping over items, imported on first use.",
    provider="agentnb.evals.mapping:map_items",
)
eval_display: Slot[EvalDisplay] = Slot(
    "eval_display",
    "The live view of a running evaluation; filled by ``%load_ext agentnb`` (else progress is not shown).",
)
case_inspector: Slot[CaseInspector] = Slot(
    "case_inspector",
    "Shows an evaluation's case in an inspector; filled by ``%load_ext agentnb``.",
)
agent_observers: Observers[AgentObserver] = Observers(
    "agent_observers",
    "Called with ``(agent, event)`` for every event of every agent; tracing adds its observer once "
    "something is traced, so turns nobody traces call nothing here.",
)
evaluation_observers: Observers[EvaluationObserver] = Observers(
    "evaluation_observers",
    "Called around every case of every evaluation; tracing adds its case spans once switched on.",
)
tracing_switch: Slot[Switch] = Slot(
    "tracing_switch",
    "Called when an agent is given a tracer provider: switches tracing's observer on.",
    provider="agentnb.tracing.switch:switch_on",
)

SLOTS = (
    markdown_display,
    evaluate,
    map_items,
    eval_display,
    case_inspector,
    agent_observers,
    evaluation_observers,
    tracing_switch,
)
"""Every extension point, for a reader looking for where the layers above plug in."""

__all__ = [
    "SLOTS",
    "AgentObserver",
    "CaseInspector",
    "EvalDisplay",
    "EvaluationObserver",
    "Evaluate",
    "MapItems",
    "MarkdownDisplay",
    "Observers",
    "Slot",
    "Switch",
    "agent_observers",
    "case_inspector",
    "eval_display",
    "evaluate",
    "evaluation_observers",
    "map_items",
    "markdown_display",
    "tracing_switch",
]
