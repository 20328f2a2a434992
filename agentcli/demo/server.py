"""The demo's stand-in for the Anthropic Messages API: streams the scenario's replies on loopback.

Only what agentcli asks of it: ``POST /v1/messages`` with ``stream: true`` gets server-sent events
in the API's shapes; anything else gets a JSON ``Message`` or an error. Standard library only, in a
thread of the agentcli process.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .scenario import Blocks, answer
from .scenario import pace as slower

Responder = Callable[[dict[str, Any]], Blocks]


def usage(body: dict[str, Any], blocks: Blocks) -> dict[str, int]:
    prompt = {k: body.get(k) for k in ("messages", "system", "tools") if body.get(k) is not None}
    output = json.dumps(blocks)
    return {
        "input_tokens": max(1, len(json.dumps(prompt)) // 4),
        "output_tokens": max(1, len(output) // 4),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def events(body: dict[str, Any], blocks: Blocks) -> list[dict[str, Any]]:
    """The event stream of one reply: message_start, each block in small deltas, message_delta, message_stop."""
    used = usage(body, blocks)
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    message: dict[str, Any] = {
        "id": f"msg_demo{time.monotonic_ns()}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or "demo",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**used, "output_tokens": 1},
    }
    out: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    start: dict[str, Any]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            words = block["text"].split(" ")
            pieces = [" ".join(words[i : i + 3]) + (" " if i + 3 < len(words) else "") for i in range(0, len(words), 3)]
            start, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces]
        else:
            raw = json.dumps(block["input"])
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": raw[i : i + 40]} for i in range(0, len(raw), 40)]
        out.append({"type": "content_block_start", "index": index, "content_block": start})
        out += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        out.append({"type": "content_block_stop", "index": index})
    out.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": used})
    out.append({"type": "message_stop"})
    return out


class DemoServer:
    """``with DemoServer() as server:`` serves on ``server.base_url`` until the block ends."""

    def __init__(self, responder: Responder = answer, pace: float = 0.02) -> None:
        self.responder, self.pace = responder, pace  # pace: seconds between streamed events, to watch them
        demo = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = None
                if not self.path.split("?")[0].endswith("/v1/messages") or not isinstance(body, dict):
                    self.send_json(
                        404,
                        {
                            "type": "error",
                            "error": {"type": "not_found_error", "message": "The demo serves /v1/messages only."},
                        },
                    )
                    return
                blocks = demo.responder(body)
                if not body.get("stream"):
                    stream = events(body, blocks)
                    message = {
                        **stream[0]["message"],
                        "content": blocks,
                        "usage": stream[-2]["usage"],
                        "stop_reason": stream[-2]["delta"]["stop_reason"],
                    }
                    self.send_json(200, message)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                wait = demo.pace * slower(body)
                for event in events(body, blocks):
                    data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    if wait:
                        time.sleep(wait)
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def send_json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="demo-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"  # type: ignore[str-bytes-safe]  # an AF_INET address: host is a str

    def __enter__(self) -> DemoServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
