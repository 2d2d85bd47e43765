"""Switching tracing on: the observers the core and evaluations call, added once something is
traced (until then a turn costs nothing here)."""

from __future__ import annotations

from typing import Any

from .. import slots
from .evaluation import observe_case
from .live import configure, observe


def instrument(tracer_provider: Any = None, capture_content: bool | None = None) -> None:
    """Trace every agent's turns to ``tracer_provider`` (default: the global provider, which
    agentnb never sets). ``capture_content`` puts prompts, messages, tool arguments and results
    on the spans; None reads ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``."""
    configure(tracer_provider, capture_content)
    switch_on()


def switch_on() -> None:
    """Have the core call ``observe`` with every event, and evaluations ``observe_case`` around
    every case (the ``tracing_switch`` slot: an agent given a tracer provider calls it)."""
    slots.agent_observers.add(observe)
    slots.evaluation_observers.add(observe_case)


__all__ = ["instrument", "switch_on"]
