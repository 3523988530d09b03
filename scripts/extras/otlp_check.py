"""Check that a traced agent's spans reach an OTLP/HTTP receiver, for scripts/extras.sh.

Usage: ``python otlp_check.py --protocol 1|2 -- AGENT COMMAND...``

It serves ``POST /v1/traces`` on a free loopback port (decoding the protobuf with
opentelemetry-proto, which ``acpio[otel]`` brings), drives the agent with
``acp_lines.py`` (beside this file) through one prompt whose tool call asks for
permission, with the standard OpenTelemetry environment pointing at the receiver,
and waits until the turn's, the tool call's and the wait's spans arrived.
Exit status 0 when they did, 1 (with the reason on stderr) otherwise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

EXPECTED = {"invoke_agent word-counter", "execute_tool count_words", "wait_for_user permission"}
received: set[str] = set()
changed = threading.Condition()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with changed:
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    received.update(span.name for span in scope_spans.spans)
            changed.notify_all()
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200 if self.path == "/v1/traces" else 404)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", default="2")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ)
    env.update(
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{server.server_address[1]}",
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_SERVICE_NAME="extras-check",
    )
    lines = Path(__file__).with_name("acp_lines.py")
    drive = [sys.executable, str(lines), "--protocol", args.protocol]
    drive += ["--prompt", "count these please ask", "--expect", "4 words", "--", *args.command]
    status = subprocess.run(drive, env=env, check=False).returncode
    if status != 0:
        return status
    with changed:
        arrived = changed.wait_for(lambda: received >= EXPECTED, timeout=30)
    server.shutdown()
    if not arrived:
        print(
            f"otlp_check: expected spans {sorted(EXPECTED)}, got {sorted(received)}",
            file=sys.stderr,
        )
        return 1
    print(f"  spans arrived: {', '.join(sorted(EXPECTED))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
