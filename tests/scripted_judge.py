"""A scripted OpenAI-compatible judge: ``POST /v1/chat/completions`` answers with a chosen reply per scenario.

The scenario is read from the request's user message (the judge prompt carries the scenario as JSON), the
reply is the ``content`` given for that scenario id (``default`` otherwise), and every request is kept
(path, headers, body) so tests can count them and check what was sent. A stdlib ``ThreadingHTTPServer`` on
a port the OS picks; ``delay_s`` holds every answer (for timeouts).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedJudge:
    def __init__(self, replies: dict[str, str], default: str = "", delay_s: float = 0.0) -> None:
        self.replies = replies
        self.default = default or json.dumps({"verdict": "pass", "reason": "looks right"})
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                judge.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if judge.delay_s:
                    time.sleep(judge.delay_s)
                user = body["messages"][-1]["content"]
                m = re.search(r'"id": "([^"]+)"', user)
                content = judge.replies.get(m.group(1) if m else "", judge.default)
                out = json.dumps(
                    {
                        "id": "chatcmpl-judge",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                    }
                ).encode()
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except OSError:  # the client gave up (a timeout test)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="scripted-judge", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedJudge:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
