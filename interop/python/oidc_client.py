#!/usr/bin/env python3
"""OIDC client: the official Python SDK calls ferry with an access token from a provider.

The SDK resolves the card, which must declare an ``openIdConnect`` security scheme naming
the provider's discovery document and require it. A credential service (the SDK's
``CredentialService``) follows that document to the token endpoint and obtains a token by
the client-credentials grant; the SDK's own ``AuthInterceptor`` puts it on every call over
``--binding``. The message must complete. A client without the interceptor must be refused
as unauthenticated.

Exit codes as ``interop_client.py``: 0 pass, 1 a check failed, 2 an unexpected exception,
3 the timeout.

Usage::

    oidc_client.py --binding JSONRPC --base http://127.0.0.1:PORT \
        --client-id ID --client-secret SECRET
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import traceback
import uuid

import httpx
from a2a.client.auth.credentials import CredentialService
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.helpers import new_text_part
from a2a.types.a2a_pb2 import TaskState
from interop_client import BINDINGS, STEP_TIMEOUT, Harness, send_blocking, user_message
from stream_events import CheckFailed, check, state_name


class ClientCredentials(CredentialService):
    """Tokens of the card's OpenID provider, by the client-credentials grant (one per run)."""

    def __init__(self, discovery_url: str, client_id: str, client_secret: str) -> None:
        self.discovery_url = discovery_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.token: str | None = None
        self.fetched = 0

    async def get_credentials(self, security_scheme_name, context) -> str | None:
        if security_scheme_name != "oidc":
            return None
        if self.token is None:
            async with httpx.AsyncClient(timeout=STEP_TIMEOUT) as http:
                discovery = (await http.get(self.discovery_url)).raise_for_status().json()
                answer = await http.post(
                    discovery["token_endpoint"],
                    data={"grant_type": "client_credentials"},
                    auth=(self.client_id, self.client_secret),
                )
                self.token = answer.raise_for_status().json()["access_token"]
                self.fetched += 1
        return self.token


async def run(args: argparse.Namespace) -> None:
    h = Harness(args.base, args.binding)
    try:
        card = await h.resolve_card()
        check("oidc" in card.security_schemes, "the card declares the scheme 'oidc'", list(card.security_schemes))
        scheme = card.security_schemes["oidc"]
        check(
            scheme.HasField("open_id_connect_security_scheme"),
            "the scheme 'oidc' is openIdConnect",
            scheme,
        )
        discovery = scheme.open_id_connect_security_scheme.open_id_connect_url
        check(
            discovery.endswith("/.well-known/openid-configuration"),
            "it names the provider's discovery document",
            discovery,
        )
        required = [name for r in card.security_requirements for name in r.schemes]
        check("oidc" in required, "the card requires it", required)
        print(f"  discovery: {discovery}", flush=True)

        credentials = ClientCredentials(discovery, args.client_id, args.client_secret)
        client = h.client(streaming=False, interceptors=[AuthInterceptor(credentials)])
        task = await send_blocking(client, user_message(f"oidc-{uuid.uuid4()}", [new_text_part("hi")]))
        check(
            task.status.state == TaskState.TASK_STATE_COMPLETED,
            "the message sent with the provider's token completed",
            state_name(task.status.state),
        )
        check(credentials.fetched == 1, "one token was fetched", credentials.fetched)

        anonymous = h.client(streaming=False)
        refused = None
        try:
            await send_blocking(anonymous, user_message(f"oidc-{uuid.uuid4()}", [new_text_part("hi")]))
        except Exception as e:  # noqa: BLE001 - whichever error type the binding raises
            refused = e
        check(refused is not None, "a call without the token is refused")
        shown = f"{type(refused).__name__}: {refused}"
        check(
            any(word in shown.lower() for word in ("401", "unauthenticated", "token")),
            "it is refused as unauthenticated",
            shown,
        )
        print(f"  without a token: {shown[:160]}", flush=True)
    finally:
        await h.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binding", required=True, choices=BINDINGS)
    parser.add_argument("--base", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret", required=True)
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()
    try:
        asyncio.run(asyncio.wait_for(run(args), args.timeout))
    except CheckFailed as e:
        print(f"FAIL [oidc/{args.binding}]: {e}", flush=True)
        return 1
    except (asyncio.TimeoutError, TimeoutError):
        print(f"FAIL [oidc/{args.binding}]: did not finish within {args.timeout:.0f}s", flush=True)
        return 3
    except Exception as e:  # noqa: BLE001 - report anything unexpected clearly
        traceback.print_exc()
        print(f"FAIL [oidc/{args.binding}]: unexpected {type(e).__name__}: {e}", flush=True)
        return 2
    print(f"PASS [oidc/{args.binding}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
