"""Every turn as OpenTelemetry spans (GenAI semantic conventions plus OpenInference).

``instrument(tracer_provider=None, capture_content=None)`` traces every agent,
``Agent(..., tracer_provider=…)`` one; ``export(history, …)`` writes a recorded session's turns
afterwards with their recorded times. Needs the ``tracing`` extra (``opentelemetry-api`` and
``-sdk``), imported only when a run is traced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .live import flush, is_instrumented, uninstrument
from .switch import instrument

__all__ = ["export", "flush", "instrument", "is_instrumented", "uninstrument"]


if TYPE_CHECKING:
    from .recorded import export


def __getattr__(name: str) -> Any:
    if name == "export":
        from .recorded import export

        return export
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
