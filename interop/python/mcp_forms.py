#!/usr/bin/env python3
"""The official MCP Python SDK drives ferry's forms agent: inspect, fill, submit.

``mcp`` 2.3.0 (see ``requirements-mcp.txt``) is the client, over one of:

* ``stdio``: the SDK starts ``ferry mcp …`` itself (the command after ``--``), as a coding
  agent would;
* ``http``: ``ferry serve``'s Streamable HTTP endpoint (the URL), with a bearer token.

The web site is this script's own stdlib HTTP server on 127.0.0.1:0 (a thread;
``shop_site.ShopSite``), addressed
as ``http://shop.test:PORT`` (ferry's browser proxy maps ``shop.test`` to 127.0.0.1):
``GET /signup`` is a sign-up form whose name and email fields carry ``autocomplete``
tokens, ``POST /submit`` records the urlencoded body and answers a page titled "Welcome".

One session runs, checking each step (``ok:`` lines):

1. ``tools/list``: the six tools, each with an object input and output schema;
2. ``forms_profile`` set ``default`` (given-name, family-name, email; a password is refused);
3. ``forms_inspect`` the page: ``completed``, the fields reported, nothing filled;
4. ``forms_fill`` the password and the terms, ``auto: true``, ``submit: true``:
   ``input-required``, ``pendingSubmit``; the name and email ``autofilled`` from
   ``profile:default``; the password not auto-filled; nothing posted;
5. a misspelt argument is a tool error naming it;
6. ``forms_status``: the submit still waits; nothing posted;
7. ``forms_submit`` with ``confirm: true``: ``completed``, ``submitted``, the page
   "Welcome", the POST holding the profile's values;
8. ``forms_close``.

In ``http`` mode, with ``--other-token``: a second session of another caller finds no
profile (profiles are per caller), and a wrong token is refused.

Prints one JSON summary line last (``{"ok": true, "tools": [...], ...}``) and exits 0; on
failure prints ``FAIL: ...`` and exits 1 (a check failed), 2 (an exception) or 3 (timeout).

Usage::

    mcp_forms.py stdio -- FERRY mcp --allow-domain shop.test ...
    mcp_forms.py http URL TOKEN [--other-token TOKEN]
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import sys
import traceback
from typing import Any
from urllib.parse import parse_qs

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent
from shop_site import ShopSite

OVERALL_TIMEOUT = 90.0
TOOLS = ["forms_inspect", "forms_fill", "forms_submit", "forms_status", "forms_close", "forms_profile"]

SIGNUP_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign up</title></head>
<body>
<h1>Create your account</h1>
<form method="post" action="/submit">
  <p><label for="fn">First name</label> <input id="fn" name="first" autocomplete="given-name" required></p>
  <p><label for="ln">Last name</label> <input id="ln" name="last" autocomplete="family-name" required></p>
  <p><label for="em">Email</label> <input id="em" name="email" type="email" autocomplete="email" required></p>
  <p><label for="pw">Password</label> <input id="pw" name="password" type="password" autocomplete="new-password" required></p>
  <p><input id="terms" name="terms" type="checkbox" value="yes" required>
     <label for="terms">I accept the terms</label></p>
  <p><button type="submit">Create account</button></p>
</form>
</body></html>
"""

WELCOME_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Welcome</title></head>
<body><h1>Welcome aboard</h1><p>Your account was created.</p></body></html>
"""


class CheckFailed(Exception):
    pass


def check(condition: bool, what: str, detail: Any = None) -> None:
    if not condition:
        raise CheckFailed(f"{what}: {detail!r}" if detail is not None else what)
    print(f"ok: {what}", flush=True)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, args)
    print(f"    {tool} {json.dumps(args)} -> error={result.is_error}", flush=True)
    return result


async def conversation(session: ClientSession, site: ShopSite) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    init = await session.initialize()
    summary["protocol"] = init.protocol_version
    summary["server"] = init.server_info.name
    check(bool(init.instructions) and "untrusted" in init.instructions, "the instructions warn about page text")

    listed = (await session.list_tools()).tools
    names = [t.name for t in listed]
    check(names == TOOLS, "the six tools, in order", names)
    for tool in listed:
        check(tool.input_schema.get("type") == "object", f"{tool.name} takes an object")
        check((tool.output_schema or {}).get("type") == "object", f"{tool.name} answers an object")
    summary["tools"] = [
        {"name": t.name, "inputSchema": t.input_schema, "outputSchema": t.output_schema} for t in listed
    ]

    saved = await call(session, "forms_profile", {"set": {"name": "default", "values": {
        "given-name": "Ada", "family-name": "Lovelace", "email": "ada@example.com"}}})
    check(not saved.is_error and saved.structured_content["saved"]["version"] == 1, "profile saved", text_of(saved))
    secret = await call(session, "forms_profile", {"set": {"values": {"current-password": "hunter2"}}})
    check(secret.is_error and "password" in text_of(secret), "a password is refused in a profile", text_of(secret))

    url = site.url("/signup")
    inspected = await call(session, "forms_inspect", {"url": url})
    data = inspected.structured_content
    check(not inspected.is_error and data["state"] == "completed", "inspect completes", data)
    check(data["untrusted"] is True, "the report is marked untrusted")
    labels = [f["label"] for f in data["report"]["fields"]]
    check({"First name", "Last name", "Email", "Password"} <= set(labels), "the fields are reported", labels)
    check("untrusted website text" in text_of(inspected), "the text fences the page off")

    filled = await call(session, "forms_fill", {
        "values": {"Password": "correct horse 42", "I accept the terms": True},
        "auto": True, "submit": True})
    data = filled.structured_content
    report = data["report"]
    check(data["state"] == "input-required", "fill waits for the confirmation", data["message"])
    check(data["needed"]["pendingSubmit"] is True, "a submit is pending")
    check(data["needed"]["missing"] == [], "nothing is missing", data["needed"])
    autofilled = report.get("autofilled", {})
    check(autofilled == {"First name": "profile:default", "Last name": "profile:default",
                         "Email": "profile:default"}, "name and email come from the profile", autofilled)
    check("Password" not in autofilled, "the password is not auto-filled")
    check(site.post_snapshot() == [], "nothing posted before the confirmation")
    summary["autofilled"] = autofilled

    typo = await call(session, "forms_fill", {"sumbit": True})
    check(typo.is_error and "sumbit" in text_of(typo), "a misspelt argument is named", text_of(typo))

    status = await call(session, "forms_status", {})
    check(status.structured_content["report"]["pendingSubmit"] is True, "status: the submit still waits")
    check(site.post_snapshot() == [], "status submits nothing")

    submitted = await call(session, "forms_submit", {"confirm": True})
    data = submitted.structured_content
    check(data["state"] == "completed", "the confirmed submit completes", data["message"])
    check(data["report"]["submitted"] is True, "submitted")
    check(data["report"]["outcome"]["title"] == "Welcome", "the page answered Welcome", data["report"].get("outcome"))
    posts = site.post_snapshot()
    check(len(posts) == 1 and posts[0][0] == "/submit", "one POST to /submit", posts)
    posted = parse_qs(posts[0][1])
    check(posted.get("first") == ["Ada"] and posted.get("last") == ["Lovelace"]
          and posted.get("email") == ["ada@example.com"], "the POST holds the profile's values", posted)
    check(posted.get("password") == ["correct horse 42"], "and the explicit password")
    summary["posted"] = sorted(posted)

    closed = await call(session, "forms_close", {})
    check(closed.structured_content == {"closed": True}, "closed")
    return summary


async def other_caller(url: str, token: str) -> None:
    """A second caller's session sees none of the first caller's profiles."""
    import httpx2

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30.0, read=120.0))
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            got = await call(session, "forms_profile", {"get": "default"})
            check(got.is_error and "no profile" in text_of(got), "another caller has no such profile", text_of(got))
            listed = await call(session, "forms_profile", {"list": True})
            check(listed.structured_content == {"profiles": []}, "another caller lists none", listed.structured_content)


async def wrong_token(url: str) -> None:
    import httpx2

    http = httpx2.AsyncClient(headers={"Authorization": "Bearer not-a-token"}, timeout=10.0)
    async with http:
        response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}},
            headers={"Accept": "application/json, text/event-stream"})
        check(response.status_code == 401, "a wrong token gets 401", response.status_code)


async def main(argv: list[str]) -> dict[str, Any]:
    with ShopSite(SIGNUP_HTML, WELCOME_HTML) as site:
        return await run(argv, site)


async def run(argv: list[str], site: ShopSite) -> dict[str, Any]:
    summary: dict[str, Any] = {"mcp": importlib.metadata.version("mcp"), "mode": argv[0]}
    if argv[0] == "stdio":
        command = argv[argv.index("--") + 1:]
        # The SDK starts the server with a minimal environment; pass on where its browser's
        # profiles go, and its log level.
        env = {k: os.environ[k] for k in ("TMPDIR", "RUST_LOG") if k in os.environ}
        params = StdioServerParameters(command=command[0], args=command[1:], env=env or None)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=60.0) as session:
                summary.update(await conversation(session, site))
    elif argv[0] == "http":
        import httpx2

        url, token = argv[1], argv[2]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                  timeout=httpx2.Timeout(30.0, read=120.0))
        async with http, streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=60.0) as session:
                summary.update(await conversation(session, site))
        if "--other-token" in argv:
            await other_caller(url, argv[argv.index("--other-token") + 1])
        await wrong_token(url)
    else:
        raise SystemExit(f"unknown mode {argv[0]!r}")
    summary["ok"] = True
    return summary


if __name__ == "__main__":
    try:
        try:
            result = asyncio.run(asyncio.wait_for(main(sys.argv[1:]), OVERALL_TIMEOUT))
        except BaseExceptionGroup as group:  # a check failed inside the SDK's task groups
            failed = group.subgroup(CheckFailed)
            if failed is None:
                raise
            first = failed
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
    except CheckFailed as e:
        print(f"FAIL: {e}", flush=True)
        sys.exit(1)
    except (TimeoutError, asyncio.TimeoutError):
        print(f"FAIL: no result within {OVERALL_TIMEOUT} s", flush=True)
        sys.exit(3)
    except BaseException as e:  # noqa: BLE001 - report everything, including ExceptionGroups
        traceback.print_exc()
        print(f"FAIL: {type(e).__name__}: {e}", flush=True)
        sys.exit(2)
    print(json.dumps(result), flush=True)
