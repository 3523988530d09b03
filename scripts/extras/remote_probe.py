"""A remote client made of the standard library only, for scripts/extras.sh.

Usage: ``python remote_probe.py PORT`` against ``acpio serve --listen 127.0.0.1:PORT``.
It waits for the server, POSTs ``initialize`` to ``/acp`` (the answer must carry an
``Acp-Connection-Id`` and a protocol version), opens the connection's SSE stream, POSTs
``session/new`` and reads the answer from that stream, then DELETEs the connection.
Exit status 0 when all of that worked, 1 (with the reason on stderr) otherwise.
"""

from __future__ import annotations

import http.client
import json
import sys
import time

HOST = "127.0.0.1"


def wait_for_server(port: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            http.client.HTTPConnection(HOST, port, timeout=2).connect()
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"remote_probe: nothing listens on {HOST}:{port}") from None
            time.sleep(0.2)
        else:
            return


def post(
    port: int, message: dict[str, object], connection_id: str | None
) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if connection_id is not None:
        headers["Acp-Connection-Id"] = connection_id
    conn.request("POST", "/acp", json.dumps(message), headers)
    response = conn.getresponse()
    return response.status, response.getheader("Acp-Connection-Id") or "", response.read()


def main() -> int:
    port = int(sys.argv[1])
    wait_for_server(port)
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    }
    status, connection_id, body = post(port, initialize, None)
    if status != 200 or not connection_id:
        print(f"remote_probe: initialize answered {status} {body!r}", file=sys.stderr)
        return 1
    answer = json.loads(body.decode().split("data:", 1)[-1]) if body.strip() else {}
    if answer.get("result", {}).get("protocolVersion") != 1:
        print(f"remote_probe: initialize result {answer!r}", file=sys.stderr)
        return 1
    stream = http.client.HTTPConnection(HOST, port, timeout=30)
    stream.request(
        "GET", "/acp", headers={"Accept": "text/event-stream", "Acp-Connection-Id": connection_id}
    )
    events = stream.getresponse()
    if events.status != 200:
        print(f"remote_probe: the SSE stream answered {events.status}", file=sys.stderr)
        return 1
    new = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": "/", "mcpServers": []},
    }
    status, _, body = post(port, new, connection_id)
    if status != 202:
        print(f"remote_probe: session/new answered {status} {body!r}", file=sys.stderr)
        return 1
    while True:
        line = events.readline()
        if not line:
            print(
                "remote_probe: the SSE stream ended before the session/new answer", file=sys.stderr
            )
            return 1
        if line.startswith(b"data:"):
            message = json.loads(line[5:])
            if message.get("id") == 1:
                break
    if "sessionId" not in message.get("result", {}):
        print(f"remote_probe: session/new result {message!r}", file=sys.stderr)
        return 1
    close = http.client.HTTPConnection(HOST, port, timeout=30)
    close.request("DELETE", "/acp", headers={"Acp-Connection-Id": connection_id})
    print(
        f"  remote: initialize, SSE and session/new over HTTP; DELETE {close.getresponse().status}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
