"""A real OTLP/HTTP trace receiver on 127.0.0.1: decodes the protobuf the SDK's exporter posts to
``/v1/traces`` (opentelemetry-proto) and keeps every span with its resource."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def plain(value: AnyValue) -> Any:
    """An OTLP AnyValue as Python."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(plain(v) for v in value.array_value.values)
    if kind == "kvlist_value":
        return {kv.key: plain(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


@dataclass
class Received:
    """One span as it arrived."""

    name: str
    trace_id: int
    span_id: int
    parent_span_id: int | None
    kind: int
    start: int
    end: int
    status_code: int
    status_message: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str
    dropped_attributes: int = 0
    """Attributes the sender's SDK dropped (past its limit of attributes per span)."""


class OTLPReceiver:
    """``with OTLPReceiver() as r: ... r.endpoint ... r.spans``; ``hold``: an event each request
    waits for (up to ``hold_s`` seconds) before it is read and answered (a slow collector)."""

    def __init__(self, hold: threading.Event | None = None, hold_s: float = 10.0) -> None:
        self.spans: list[Received] = []
        self.requests = 0
        self.content_types: list[str] = []
        self.sizes: list[int] = []
        """Each request's body size in bytes."""
        self.bodies: list[bytes] = []
        """Each request's body as it arrived."""
        self.arrived = threading.Event()
        """Set when the first request comes in (before it is held)."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.arrived.set()
                if hold is not None:
                    hold.wait(hold_s)
                receiver._take(self.path, self.headers.get("Content-Type", ""), body)
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/traces"

    def _take(self, path: str, content_type: str, body: bytes) -> None:
        assert path == "/v1/traces", path
        request = ExportTraceServiceRequest.FromString(body)
        with self._lock:
            self.requests += 1
            self.content_types.append(content_type)
            self.sizes.append(len(body))
            self.bodies.append(body)
            for rs in request.resource_spans:
                resource = {kv.key: plain(kv.value) for kv in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(
                            Received(
                                name=s.name,
                                trace_id=int.from_bytes(s.trace_id, "big"),
                                span_id=int.from_bytes(s.span_id, "big"),
                                parent_span_id=int.from_bytes(s.parent_span_id, "big")
                                if s.parent_span_id
                                else None,
                                kind=s.kind,
                                start=s.start_time_unix_nano,
                                end=s.end_time_unix_nano,
                                status_code=s.status.code,
                                status_message=s.status.message,
                                attributes={kv.key: plain(kv.value) for kv in s.attributes},
                                resource=resource,
                                scope=ss.scope.name,
                                dropped_attributes=s.dropped_attributes_count,
                            )
                        )

    def __enter__(self) -> OTLPReceiver:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
