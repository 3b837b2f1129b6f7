"""A small OpenID Connect provider for ferry's identity tests, on 127.0.0.1.

It is an issuer as a client and a resource server meet one: a discovery document, a key set
(RS256, ES256 and EdDSA keys), a token endpoint (client credentials, the device flow, refresh
tokens) and a device authorization endpoint. Tokens are signed with PyJWT and `cryptography`,
not with ferry's code, so a mistake in ferry's verifier cannot cancel out one in its signer.

Besides the protocol it has test controls under /test/ (never part of a real provider):

    POST /test/approve   {"user_code": ..., "subject": ...}   a person approves a device code
    POST /test/rotate    {}                                    new keys replace the old ones
    POST /test/mint      {"claims": {...}, "alg": ..., "kid": ..., "tamper": bool}
                         a token as given: alg "none" and "HS256-public-key" (HMAC keyed with
                         the RSA public key) are the classic forgeries
    POST /test/settings  {"access_ttl": seconds}               lifetime of the tokens it issues
    GET  /test/grants                                          the grant types asked so far

Usage: oidc_provider.py --audience AUD [--client ID:SECRET[:SCOPE ...]]...
Prints `issuer http://127.0.0.1:PORT` once it listens; runs until killed.
"""

import argparse
import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Keys:
    """One key of each algorithm, with a generation number in its kid."""

    def __init__(self, generation: int):
        self.generation = generation
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.ed = ed25519.Ed25519PrivateKey.generate()

    def kid(self, alg: str) -> str:
        return f"{alg.lower()}-{self.generation}"

    def private(self, alg: str):
        return {"RS256": self.rsa, "ES256": self.ec, "EdDSA": self.ed}[alg]

    def jwks(self) -> dict:
        keys = []
        for alg, algorithm, key in (
            ("RS256", RSAAlgorithm, self.rsa),
            ("ES256", ECAlgorithm, self.ec),
            ("EdDSA", OKPAlgorithm, self.ed),
        ):
            jwk = json.loads(algorithm.to_jwk(key.public_key()))
            jwk.update({"kid": self.kid(alg), "use": "sig", "alg": alg})
            keys.append(jwk)
        return {"keys": keys}

    def rsa_public_pem(self) -> bytes:
        return self.rsa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


class Provider:
    def __init__(self, audience: str, clients: dict):
        self.audience = audience
        self.clients = clients  # id -> (secret, scope)
        self.keys = Keys(1)
        self.issuer = ""
        self.access_ttl = 300
        self.devices = {}  # device_code -> {"user_code", "client_id", "scope", "subject"}
        self.refresh_tokens = {}  # refresh token -> (client_id, subject, scope)
        self.grants = []
        self.lock = threading.Lock()

    def claims(self, subject: str, scope: str, client_id: str) -> dict:
        now = int(time.time())
        return {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": subject,
            "client_id": client_id,
            "scope": scope,
            "iat": now,
            "nbf": now,
            "exp": now + self.access_ttl,
            "jti": secrets.token_hex(8),
        }

    def sign(self, claims: dict, alg: str = "RS256", kid=None, typ="at+jwt") -> str:
        headers = {"kid": kid if kid is not None else self.keys.kid(alg), "typ": typ}
        return jwt.encode(claims, self.keys.private(alg), algorithm=alg, headers=headers)

    def forge(self, claims: dict, alg: str, kid) -> str:
        """Tokens PyJWT refuses to make: unsigned, or HMAC keyed with the public key."""
        header = {"alg": "none" if alg == "none" else "HS256", "typ": "JWT"}
        if kid is not None or alg != "none":
            header["kid"] = kid if kid is not None else self.keys.kid("RS256")
        signing_input = (
            b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
        )
        if alg == "none":
            return signing_input + "."
        mac = hmac.new(self.keys.rsa_public_pem(), signing_input.encode(), hashlib.sha256)
        return signing_input + "." + b64url(mac.digest())

    def issue(self, client_id: str, subject: str, scope: str, refresh: bool) -> dict:
        answer = {
            "access_token": self.sign(self.claims(subject, scope, client_id)),
            "token_type": "Bearer",
            "expires_in": self.access_ttl,
            "scope": scope,
        }
        if refresh:
            token = secrets.token_urlsafe(24)
            self.refresh_tokens[token] = (client_id, subject, scope)
            answer["refresh_token"] = token
        return answer


class Handler(BaseHTTPRequestHandler):
    provider: Provider = None

    def log_message(self, *args):
        pass

    def reply(self, status: int, body: dict):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def oauth_error(self, status: int, error: str, description: str = ""):
        self.reply(status, {"error": error, "error_description": description})

    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length)

    def form(self) -> dict:
        return {k: v[0] for k, v in urllib.parse.parse_qs(self.body().decode()).items()}

    def client(self, form: dict):
        """The authenticated client: HTTP Basic or the form's client_id/client_secret."""
        client_id, secret = form.get("client_id"), form.get("client_secret")
        auth = self.headers.get("Authorization", "")
        if auth.lower().startswith("basic "):
            decoded = base64.b64decode(auth[6:]).decode()
            client_id, _, secret = decoded.partition(":")
            client_id = urllib.parse.unquote_plus(client_id)
            secret = urllib.parse.unquote_plus(secret)
        known = self.provider.clients.get(client_id or "")
        if known is None:
            return None
        # A public client (no secret registered) uses the device flow only.
        if known[0] and not hmac.compare_digest(known[0], secret or ""):
            return None
        return client_id

    def do_GET(self):
        p = self.provider
        path = urllib.parse.urlparse(self.path).path
        if path == "/.well-known/openid-configuration":
            self.reply(
                200,
                {
                    "issuer": p.issuer,
                    "jwks_uri": p.issuer + "/jwks",
                    "token_endpoint": p.issuer + "/token",
                    "device_authorization_endpoint": p.issuer + "/device",
                    "grant_types_supported": [
                        "client_credentials",
                        DEVICE_GRANT,
                        "refresh_token",
                    ],
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["RS256", "ES256", "EdDSA"],
                    "token_endpoint_auth_methods_supported": [
                        "client_secret_basic",
                        "client_secret_post",
                        "none",
                    ],
                },
            )
        elif path == "/jwks":
            with p.lock:
                self.reply(200, p.keys.jwks())
        elif path == "/test/grants":
            with p.lock:
                self.reply(200, {"grants": list(p.grants)})
        else:
            self.reply(404, {"error": "not_found"})

    def do_POST(self):
        path = urllib.parse.urlparse(self.path).path
        routes = {
            "/token": self.token,
            "/device": self.device,
            "/test/approve": self.approve,
            "/test/rotate": self.rotate,
            "/test/mint": self.mint,
            "/test/settings": self.settings,
        }
        route = routes.get(path)
        if route is None:
            self.reply(404, {"error": "not_found"})
        else:
            route()

    def token(self):
        p = self.provider
        form = self.form()
        grant = form.get("grant_type", "")
        with p.lock:
            p.grants.append(grant)
            client_id = self.client(form)
            if client_id is None:
                return self.oauth_error(401, "invalid_client", "unknown client or wrong secret")
            if grant == "client_credentials":
                secret, allowed = p.clients[client_id]
                if not secret:
                    return self.oauth_error(400, "unauthorized_client", "a public client")
                scope = form.get("scope") or allowed
                if not set(scope.split()) <= set(allowed.split()):
                    return self.oauth_error(400, "invalid_scope", scope)
                return self.reply(200, p.issue(client_id, client_id, scope, refresh=False))
            if grant == DEVICE_GRANT:
                device = p.devices.get(form.get("device_code", ""))
                if device is None or device["client_id"] != client_id:
                    return self.oauth_error(400, "invalid_grant", "unknown device code")
                if device["subject"] is None:
                    return self.oauth_error(400, "authorization_pending")
                del p.devices[form["device_code"]]
                answer = p.issue(client_id, device["subject"], device["scope"], refresh=True)
                return self.reply(200, answer)
            if grant == "refresh_token":
                kept = p.refresh_tokens.pop(form.get("refresh_token", ""), None)
                if kept is None or kept[0] != client_id:
                    return self.oauth_error(400, "invalid_grant", "unknown refresh token")
                return self.reply(200, p.issue(kept[0], kept[1], kept[2], refresh=True))
            return self.oauth_error(400, "unsupported_grant_type", grant)

    def device(self):
        p = self.provider
        form = self.form()
        with p.lock:
            client_id = self.client(form)
            if client_id is None:
                return self.oauth_error(401, "invalid_client")
            device_code = secrets.token_urlsafe(24)
            user_code = "-".join(secrets.token_hex(2).upper() for _ in range(2))
            p.devices[device_code] = {
                "user_code": user_code,
                "client_id": client_id,
                "scope": form.get("scope") or p.clients[client_id][1],
                "subject": None,
            }
        self.reply(
            200,
            {
                "device_code": device_code,
                "user_code": user_code,
                "verification_uri": p.issuer + "/activate",
                "verification_uri_complete": p.issuer + "/activate?user_code=" + user_code,
                "expires_in": 600,
                "interval": 1,
            },
        )

    def approve(self):
        p = self.provider
        asked = json.loads(self.body() or b"{}")
        with p.lock:
            for device in p.devices.values():
                if device["user_code"] == asked.get("user_code"):
                    device["subject"] = asked.get("subject", "person")
                    return self.reply(200, {"approved": True})
        self.reply(404, {"error": "unknown user code"})

    def rotate(self):
        p = self.provider
        with p.lock:
            p.keys = Keys(p.keys.generation + 1)
            self.reply(200, {"kid": p.keys.kid("RS256")})

    def mint(self):
        p = self.provider
        asked = json.loads(self.body() or b"{}")
        alg = asked.get("alg", "RS256")
        with p.lock:
            claims = p.claims(asked.get("subject", "alice"), asked.get("scope", ""), "test")
            claims.update(asked.get("claims", {}))
            for name in asked.get("remove", []):
                claims.pop(name, None)
            if alg in ("none", "HS256-public-key"):
                token = p.forge(claims, alg, asked.get("kid"))
            else:
                token = p.sign(claims, alg, asked.get("kid"), asked.get("typ", "at+jwt"))
        if asked.get("tamper"):
            header, payload, signature = token.split(".")
            changed = dict(claims, sub="mallory")
            token = ".".join([header, b64url(json.dumps(changed).encode()), signature])
        self.reply(200, {"token": token})

    def settings(self):
        p = self.provider
        asked = json.loads(self.body() or b"{}")
        with p.lock:
            if "access_ttl" in asked:
                p.access_ttl = int(asked["access_ttl"])
        self.reply(200, {"access_ttl": p.access_ttl})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audience", required=True)
    parser.add_argument(
        "--client",
        action="append",
        default=[],
        help="ID:SECRET[:SCOPE ...] (an empty SECRET makes a public client)",
    )
    args = parser.parse_args()
    clients = {}
    for entry in args.client:
        client_id, secret, *scope = entry.split(":", 2)
        clients[client_id] = (secret, scope[0] if scope else "")
    provider = Provider(args.audience, clients)
    Handler.provider = provider
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    provider.issuer = f"http://127.0.0.1:{server.server_address[1]}"
    print("issuer", provider.issuer, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
