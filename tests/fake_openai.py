"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol.

Programmable per request: `server.script` is consumed one behaviour per request, then
`server.default` applies. Behaviours: ("ok", text), ("status", code, headers), ("malformed",),
("empty",), ("hang", seconds). `server.latency` adds a sleep to every request.
Standard library only, so worker subprocesses and benchmarks can use it too.
"""

import json
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def default_moral(messages: list[dict]) -> str:
    user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    story = user.split("Story:", 1)[-1].split()
    return "Moral: " + " ".join(story[:5]) + " teaches patience."


class FakeOpenAI:
    def __init__(self, port: int = 0, latency: float = 0.0):
        self.latency = latency
        self.script: deque = deque()
        self.default: tuple = ("ok", None)
        self.requests: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def _next_behaviour(self):
        with self._lock:
            return self.script.popleft() if self.script else self.default

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, as real providers do: HTTP/1.0 would make every request a new
            # connection (and a new server thread), which is not what the app pays for.
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out without delay

            def log_message(self, *args):
                pass

            def _send(self, code: int, body: bytes, headers: dict | None = None):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                try:
                    payload = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    payload = {}
                with fake._lock:
                    fake.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "json": payload}
                    )
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    if fake.latency:
                        time.sleep(fake.latency)
                    self._respond(payload, fake._next_behaviour())
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

            def _respond(self, payload, behaviour):
                kind = behaviour[0]
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, b'{"error": "not found"}')
                if kind == "status":
                    headers = behaviour[2] if len(behaviour) > 2 else {}
                    return self._send(behaviour[1], b'{"error": {"message": "scripted"}}', headers)
                if kind == "malformed":
                    return self._send(200, b'{"choices": [ this is not json')
                if kind == "hang":
                    time.sleep(behaviour[1])
                    return self._send(200, b"{}")
                text = (
                    ""
                    if kind == "empty"
                    else (
                        behaviour[1]
                        if len(behaviour) > 1 and behaviour[1] is not None
                        else default_moral(payload.get("messages", []))
                    )
                )
                body = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "model": payload.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": text},
                        }
                    ],
                    "usage": {"prompt_tokens": 42, "completion_tokens": 9, "total_tokens": 51},
                }
                return self._send(200, json.dumps(body).encode())

        return Handler


if __name__ == "__main__":  # python tests/fake_openai.py PORT LATENCY: for benchmarks
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    with FakeOpenAI(port=port, latency=float(sys.argv[2]) if len(sys.argv) > 2 else 0) as s:
        print(s.url, flush=True)
        threading.Event().wait()
