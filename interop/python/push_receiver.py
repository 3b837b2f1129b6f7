#!/usr/bin/env python3
"""A push-notification receiver written with PyJWT: checks ferry's signed deliveries
the way README "Push notifications" tells a receiver in any language to.

Driven by ``crates/ferry/tests/push_cli.rs``. Usage::

    push_receiver.py AGENT_BASE_URL

Listens on 127.0.0.1 (a free port) and prints ``listening: URL`` first. For every
``POST`` it fetches the agent's key set (``AGENT_BASE_URL/.well-known/jwks.json``),
verifies ``A2A-Push-Signature`` with PyJWT (the key named by ``kid``; ``iss`` = the
agent's card URL, ``aud`` = this receiver's URL, ``exp``), compares ``body_sha256`` with
the body received, and drops a ``jti`` seen before. It also checks that the same
signature is refused for a tampered body, for another audience and once expired (a
negative leeway moves "now" past ``exp``). One JSON line per delivery::

    {"jti": ..., "verified": true, "replay": false, "kind": "statusUpdate",
     "state": "TASK_STATE_WORKING",
     "tamperedBody": "refused: body_sha256 differs",
     "otherAudience": "refused: InvalidAudienceError",
     "expired": "refused: ExpiredSignatureError", "token": "...", "contentType": "..."}

A delivery that does not verify is answered 401 and printed with ``"verified": false``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

import jwt

AGENT = sys.argv[1].rstrip("/")
CARD = f"{AGENT}/.well-known/agent-card.json"
SEEN: set[str] = set()


def digest(body: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()


def check(token: str, body: bytes, audience: str, leeway: float = 0) -> str:
    """``ok`` or why PyJWT (or the body hash) refused it."""
    with urllib.request.urlopen(f"{AGENT}/.well-known/jwks.json") as response:
        keys = jwt.PyJWKSet.from_json(response.read().decode())
    try:
        header = jwt.get_unverified_header(token)
        key = keys[header["kid"]]
        claims = jwt.decode(
            token,
            key.key,
            algorithms=[header["alg"]],
            audience=audience,
            issuer=CARD,
            leeway=leeway,
            # A negative leeway moves "now" past exp; iat must not be judged by it too.
            options={"require": ["exp", "iat", "jti", "iss", "aud"], "verify_iat": leeway >= 0},
        )
    except (jwt.PyJWTError, KeyError) as e:
        return f"refused: {type(e).__name__}"
    if claims.get("body_sha256") != digest(body):
        return "refused: body_sha256 differs"
    return "ok"


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        token = self.headers.get("A2A-Push-Signature", "")
        audience = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}{self.path}"
        verdict = check(token, body, audience)
        claims = jwt.decode(token, options={"verify_signature": False}) if token else {}
        jti = claims.get("jti", "")
        replay = verdict == "ok" and jti in SEEN
        SEEN.add(jti)
        exp = claims.get("exp", 0) - claims.get("iat", 0)
        event = json.loads(body or b"{}")
        kind = next(iter(event), "")
        line = {
            "jti": jti,
            "deliveryId": self.headers.get("A2A-Delivery-Id", ""),
            "verified": verdict == "ok",
            "why": verdict,
            "replay": replay,
            "kind": kind,
            "state": (event.get(kind) or {}).get("status", {}).get("state", ""),
            "tamperedBody": check(token, body + b" ", audience),
            "otherAudience": check(token, body, audience + "/other"),
            "expired": check(token, body, audience, leeway=-(exp + 1)),
            "token": self.headers.get("X-A2A-Notification-Token", ""),
            "contentType": self.headers.get("Content-Type", ""),
        }
        print(json.dumps(line), flush=True)
        self.send_response(200 if verdict == "ok" else 401)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    host, port = server.server_address[:2]
    print(f"listening: http://{host}:{port}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
