"""A small OTLP/HTTP trace receiver on loopback: exported spans, decoded by opentelemetry-proto.

``POST /v1/traces`` takes an ``ExportTraceServiceRequest`` (protobuf, as
``OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`` sends it) and answers an empty
``ExportTraceServiceResponse``; every span received is kept as a :class:`Received`.
:meth:`Receiver.wait_for` blocks until a predicate over them holds (a thread
serves the requests, so tests call it from a worker thread, or before anything
async runs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

STATUS_ERROR = 2  # opentelemetry.proto.trace.v1.Status.STATUS_CODE_ERROR


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(item) for item in value.array_value.values)
    return getattr(value, kind) if kind is not None else None


@dataclass(frozen=True)
class Received:
    """One exported span, as the receiver decoded it."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, object]
    resource: dict[str, object]
    error: bool
    ended: bool


class Receiver:
    """The spans received so far (see the module doc)."""

    def __init__(self, port: int) -> None:
        self.endpoint = f"http://127.0.0.1:{port}"
        self.spans: list[Received] = []
        self.paths: list[str] = []
        self._changed = threading.Condition()

    def add(self, path: str, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self._changed:
            self.paths.append(path)
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        self.spans.append(
                            Received(
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_span_id=span.parent_span_id.hex(),
                                attributes={a.key: _value(a.value) for a in span.attributes},
                                resource=resource,
                                error=span.status.code == STATUS_ERROR,
                                ended=span.end_time_unix_nano >= span.start_time_unix_nano > 0,
                            )
                        )
            self._changed.notify_all()

    def wait_for(
        self, predicate: Callable[[list[Received]], bool], timeout: float = 30.0
    ) -> list[Received]:
        """Block until ``predicate(spans)`` holds; the spans then.

        :raises AssertionError: when it does not within ``timeout`` seconds.
        """
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(list(self.spans)), timeout):
                names = [span.name for span in self.spans]
                raise AssertionError(f"the spans expected did not arrive; received {names}")
            return list(self.spans)


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """Serve a :class:`Receiver` on a free loopback port while the block runs."""
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            holder[0].add(self.path, body)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass  # nothing on stderr for each export

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(server.server_address[1]))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
