"""A tiny web site for the forms agent's interop scripts.

A stdlib HTTP server on 127.0.0.1:0 in a thread, addressed as ``http://shop.test:PORT``
(ferry's browser proxy maps ``shop.test`` to 127.0.0.1 with ``--resolve``): ``GET /signup``
answers the given sign-up page, ``POST /submit`` records the urlencoded body and answers the
given welcome page; both are recorded (``gets``, ``posts``). Used by ``forms_conversation.py``
(the A2A SDK) and ``mcp_forms.py`` (the MCP SDK); standard library only.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "shop.test"


class ShopSite:
    """The site; a context manager that serves while it is entered."""

    def __init__(self, signup_html: str, welcome_html: str) -> None:
        self.lock = threading.Lock()
        self.gets: list[str] = []
        self.posts: list[tuple[str, str]] = []  # (path, body)
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                print(f"    site: {self.command} {self.path} {format % args}", flush=True)

            def _send(self, status: int, body: str) -> None:
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                with site.lock:
                    site.gets.append(self.path)
                if self.path.split("?", 1)[0] == "/signup":
                    self._send(200, signup_html)
                else:
                    self._send(404, "<!doctype html><title>Not found</title>")

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace")
                with site.lock:
                    site.posts.append((self.path, body))
                if self.path.split("?", 1)[0] == "/submit":
                    self._send(200, welcome_html)
                else:
                    self._send(404, "<!doctype html><title>Not found</title>")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="site", daemon=True)

    def __enter__(self) -> ShopSite:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def post_snapshot(self) -> list[tuple[str, str]]:
        with self.lock:
            return list(self.posts)
