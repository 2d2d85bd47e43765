"""The spans an in-memory exporter holds, by name and as a tree (for the tracing tests)."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentnb import tracing


class Spans:
    """The spans a provider exported, by name and as a tree."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter

    @property
    def all(self) -> list[ReadableSpan]:
        """Every span exported once the turns so far are handed over (turns never wait for it)."""
        assert tracing.flush(timeout=60), "the spans were not handed to the exporter within 60 s"
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.all if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {[s.name for s in self.all]}"
        return found[0]

    def children(self, span: ReadableSpan) -> list[ReadableSpan]:
        return sorted(
            (s for s in self.all if s.parent is not None and s.parent.span_id == span.context.span_id),
            key=lambda s: (s.start_time, s.name),
        )

    def tree(self, span: ReadableSpan | None = None) -> Any:
        """Names as nested tuples: (name, [children...])."""
        if span is None:
            roots = [s for s in self.all if s.parent is None]
            return [self.tree(r) for r in sorted(roots, key=lambda s: s.start_time)]
        return (span.name, [self.tree(c) for c in self.children(span)])

    def text(self) -> str:
        """Every attribute of every span as one text (to look for what must not be there)."""
        return json.dumps(
            [
                {k: str(v) for k, v in s.attributes.items()} | {"@status": s.status.description or ""}
                for s in self.all
            ]
        )

    def clear(self) -> None:
        assert tracing.flush(timeout=60)
        self.exporter.clear()
