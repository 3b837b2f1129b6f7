#!/usr/bin/env python3
"""Signing interop: the official Python SDK's agent card signer and verifier.

Uses only ``a2a.utils.signing`` of ``a2a-sdk[signing]`` 1.3.0 (see
``requirements.txt``) and the SDK's own card parsing (``parse_agent_card``, or
``A2ACardResolver`` for a served card), so what is checked is exactly what an
SDK user gets. Driven by ``crates/ferry/tests/interop_signing.rs``.

Subcommands::

    signing_interop.py sign CARD_IN PRIVATE_PEM KID ALG > CARD_OUT
    signing_interop.py verify CARD PUBLIC_PEM_OR_JWK_OR_JWKS
    signing_interop.py verify-url BASE_URL [--expect-kids KID,KID...]

``sign``
    Parses CARD_IN (a JSON file, ``-`` for stdin) with the SDK, signs it with
    ``create_agent_card_signer`` (protected header ``{"alg", "kid",
    "typ": "JOSE"}``) and prints the signed card as the SDK serializes it
    (``MessageToDict``, camelCase members).
``verify``
    Verifies CARD with ``create_signature_verifier``. The key file is a PEM
    public key (trusted for every ``kid``), a JWK (trusted for its ``kid``) or
    a JWKS (each key for its ``kid``).
``verify-url``
    Fetches ``BASE_URL/.well-known/jwks.json``, then resolves the card at
    ``BASE_URL/.well-known/agent-card.json`` with the SDK's ``A2ACardResolver``
    and the JWKS-backed verifier. Each signature is also checked on its own and
    reported; with ``--expect-kids`` exactly those kids must each verify.

Every verification accepts ES256, ES384, EdDSA, RS256 and PS256 (all the
algorithms PyJWT implements with ``cryptography`` that the card issue names).

Exit codes: 0 success (for the verifiers: the card verified); 1 the card was
refused (``REFUSED: ...`` on stdout); 2 anything else (bad arguments,
unreadable files, network errors; a traceback on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import traceback

from typing import Any

import httpx
from google.protobuf.json_format import MessageToDict
from jwt.api_jwk import PyJWK
from jwt.exceptions import InvalidKeyError
from jwt.utils import base64url_decode

from a2a.client.card_resolver import A2ACardResolver, parse_agent_card
from a2a.types.a2a_pb2 import AgentCard
from a2a.utils.signing import (
    SignatureVerificationError,
    create_agent_card_signer,
    create_signature_verifier,
)


ALGORITHMS = ['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256']
JWKS_PATH = '/.well-known/jwks.json'
HTTP_TIMEOUT = 10.0


class Refused(Exception):
    """The card did not verify (exit 1)."""


def read_bytes(path: str) -> bytes:
    """Reads a file, ``-`` being standard input."""
    if path == '-':
        return sys.stdin.buffer.read()
    with open(path, 'rb') as f:
        return f.read()


def load_card(path: str) -> AgentCard:
    """Parses a card file the way the SDK's card resolver does."""
    data = json.loads(read_bytes(path))
    return parse_agent_card(data)


def jwks_provider(jwks: dict[str, Any]):
    """A key provider over a JWKS: each key serves its own ``kid`` only."""
    keys = jwks.get('keys')
    if not isinstance(keys, list):
        raise ValueError('the JWKS has no "keys" array')
    by_kid: dict[str, PyJWK] = {}
    for jwk in keys:
        kid = jwk.get('kid')
        if not isinstance(kid, str):
            raise ValueError(f'a JWKS key has no kid: {jwk}')
        by_kid[kid] = PyJWK(jwk)

    def provider(kid: str | None, jku: str | None) -> PyJWK:
        # `jku` is never followed: keys come from the given set only. Raising a
        # PyJWTError makes the SDK's verifier move on to the next signature.
        del jku
        if kid not in by_kid:
            raise InvalidKeyError(f'no key with kid {kid!r} in the JWKS')
        return by_kid[kid]

    return provider, sorted(by_kid)


def key_file_provider(path: str):
    """A key provider for a PEM public key, a JWK or a JWKS file."""
    raw = read_bytes(path)
    if raw.lstrip().startswith(b'{'):
        doc = json.loads(raw)
        if 'keys' in doc:
            provider, _ = jwks_provider(doc)
            return provider
        provider, _ = jwks_provider({'keys': [doc]})
        return provider

    def pem_provider(kid: str | None, jku: str | None) -> bytes:
        del kid, jku
        return raw

    return pem_provider


def verify_card(card: AgentCard, provider) -> None:
    """Runs the SDK verifier; raises Refused when no signature verifies."""
    verifier = create_signature_verifier(provider, ALGORITHMS)
    try:
        verifier(card)
    except SignatureVerificationError as e:
        raise Refused(f'{type(e).__name__}: {e}') from e


def cmd_sign(args: argparse.Namespace) -> None:
    card = load_card(args.card)
    key = read_bytes(args.private_pem)
    # Only the members we want: the SDK copies every given member into the
    # protected header (an explicit `jku: None` would become `"jku": null`).
    signer = create_agent_card_signer(
        signing_key=key,
        protected_header={'alg': args.alg, 'kid': args.kid, 'typ': 'JOSE'},  # type: ignore[typeddict-item]
    )
    signed = signer(card)
    json.dump(MessageToDict(signed), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write('\n')


def cmd_verify(args: argparse.Namespace) -> None:
    card = load_card(args.card)
    verify_card(card, key_file_provider(args.key))
    print(f'ok: {args.card} verified by the a2a-sdk verifier')


def single_signature(card: AgentCard, index: int) -> AgentCard:
    """A copy of `card` carrying only its signature number `index`."""
    copy = AgentCard()
    copy.CopyFrom(card)
    del copy.signatures[:]
    copy.signatures.append(card.signatures[index])
    return copy


def kid_of(signature) -> str | None:
    """The kid of a signature's protected header (not verified)."""
    header_json = base64url_decode(signature.protected.encode('ascii'))
    return json.loads(header_json).get('kid')


async def verify_url(base_url: str, expect_kids: list[str] | None) -> None:
    base = base_url.rstrip('/')
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as client:
        response = await client.get(base + JWKS_PATH)
        response.raise_for_status()
        provider, published = jwks_provider(response.json())
        print(f'ok: {base}{JWKS_PATH} publishes kids {published}')
        verifier = create_signature_verifier(provider, ALGORITHMS)
        resolver = A2ACardResolver(client, base)
        try:
            card = await resolver.get_agent_card(signature_verifier=verifier)
        except SignatureVerificationError as e:
            raise Refused(f'{type(e).__name__}: {e}') from e
    print(
        f'ok: A2ACardResolver accepted the served card {card.name!r} '
        f'({len(card.signatures)} signature(s))'
    )
    verified = []
    for i, signature in enumerate(card.signatures):
        kid = kid_of(signature)
        try:
            verify_card(single_signature(card, i), provider)
        except Refused as e:
            print(f'note: signature {i} (kid {kid!r}) does not verify: {e}')
            continue
        print(f'ok: signature {i} (kid {kid!r}) verifies on its own')
        verified.append(kid)
    if expect_kids is not None and sorted(verified) != sorted(expect_kids):
        raise Refused(
            f'signatures verified for kids {sorted(verified)}, '
            f'expected exactly {sorted(expect_kids)}'
        )


def cmd_verify_url(args: argparse.Namespace) -> None:
    kids = args.expect_kids.split(',') if args.expect_kids else None
    asyncio.run(verify_url(args.base_url, kids))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)
    p = sub.add_parser('sign', help='sign a card with the SDK signer')
    p.add_argument('card')
    p.add_argument('private_pem')
    p.add_argument('kid')
    p.add_argument('alg', choices=ALGORITHMS)
    p.set_defaults(run=cmd_sign)
    p = sub.add_parser('verify', help='verify a card with the SDK verifier')
    p.add_argument('card')
    p.add_argument('key', help='PEM public key, JWK or JWKS file')
    p.set_defaults(run=cmd_verify)
    p = sub.add_parser('verify-url', help="verify a server's signed card")
    p.add_argument('base_url')
    p.add_argument('--expect-kids', help='comma-separated kids that must each verify')
    p.set_defaults(run=cmd_verify_url)
    args = parser.parse_args()
    try:
        args.run(args)
    except Refused as e:
        print(f'REFUSED: {e}')
        return 1
    except Exception:  # noqa: BLE001 - any other failure is exit 2 with a traceback
        traceback.print_exc()
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
