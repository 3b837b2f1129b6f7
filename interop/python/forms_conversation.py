#!/usr/bin/env python3
"""Forms conversation: the official Python SDK drives ferry's forms agent.

``a2a-sdk`` 1.3.0 (see ``requirements.txt``) talks to ``ferry serve`` (the
default ``forms`` agent, started with ``--allow-domain shop.test
--allow-private-networks --resolve shop.test=127.0.0.1``; see
``crates/ferry/tests/interop_forms.rs``) over streaming SendMessage
(SendStreamingMessage) and fills a sign-up form in three turns on one task:

1. ``{"url": ".../signup", "values": {"Full name", "Email"}, "submit": true}``
   → INPUT_REQUIRED; ``missing`` = Password and the terms checkbox; nothing
   pending; the stream shows ``working`` updates before the final state.
2. ``{"values": {"Password", "I accept the terms"}, "submit": true}``
   → INPUT_REQUIRED; ``missing`` = []; ``pendingSubmit`` true; nothing posted.
3. ``{"confirm": true}`` → COMPLETED; ``submitted`` true; ``outcome.title`` =
   "Welcome"; the POST body holds every field.

The web site is this script's own stdlib HTTP server on 127.0.0.1:0 (a thread;
``shop_site.ShopSite``):
``GET /signup`` is the form, ``POST /submit`` records the urlencoded body and
answers a page titled "Welcome". Pages are addressed as ``http://shop.test:PORT``;
ferry's browser proxy maps ``shop.test`` to 127.0.0.1.

Both artifacts (``result`` and ``data``) must carry ``metadata.untrusted: true``.

Prints one ``ok:`` line per check and, at the end, one JSON summary line
(``{"ok": true, ...}``); exits 0. On failure prints ``FAIL: ...`` and exits
non-zero (1: a check failed, 2: unexpected exception, 3: timeout).

Usage::

    forms_conversation.py http://127.0.0.1:PORT [JSONRPC|HTTP+JSON]
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import traceback
import uuid

from typing import Any
from urllib.parse import parse_qs

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers import get_data_parts, get_text_parts, new_data_part
from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest, StreamResponse, TaskState
from a2a.utils.constants import TransportProtocol
from google.protobuf.json_format import MessageToDict
from shop_site import ShopSite
from stream_events import (
    CheckFailed,
    check,
    collect,
    describe,
    event_context_id,
    event_task_id,
    state_name,
)

# Per-event limit (the first turn starts Chromium); the whole conversation has OVERALL_TIMEOUT.
STEP_TIMEOUT = 30.0
OVERALL_TIMEOUT = 55.0
WELCOME_TITLE = "Welcome"

SIGNUP_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign up</title></head>
<body>
<h1>Create your account</h1>
<form method="post" action="/submit">
  <p><label for="name">Full name</label> <input id="name" name="name" type="text" required></p>
  <p><label for="email">Email</label> <input id="email" name="email" type="email" required></p>
  <p><label for="password">Password</label> <input id="password" name="password" type="password" required></p>
  <p><input id="terms" name="terms" type="checkbox" value="yes" required>
     <label for="terms">I accept the terms</label></p>
  <p><label for="country">Country</label>
     <select id="country" name="country">
       <option value="">Choose one</option>
       <option value="uk">United Kingdom</option>
       <option value="de">Germany</option>
     </select></p>
  <p><button type="submit">Create account</button></p>
</form>
</body></html>
"""

WELCOME_HTML = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{WELCOME_TITLE}</title></head>
<body><h1>Welcome aboard</h1><p>Your account was created.</p></body></html>
"""


# --- the web site ----------------------------------------------------------------


# --- stream helpers --------------------------------------------------------------


def states(events: list[StreamResponse]) -> list[int]:
    """Every task state the stream reported, in order (Task snapshots and status updates)."""
    out = []
    for e in events:
        if e.HasField("task"):
            out.append(e.task.status.state)
        elif e.HasField("status_update"):
            out.append(e.status_update.status.state)
    return out


def seen_final(events: list[StreamResponse]) -> int:
    """The last task state the stream reported."""
    s = states(events)
    return s[-1] if s else TaskState.TASK_STATE_UNSPECIFIED


def final_status(events: list[StreamResponse]):
    """The TaskStatus of the last Task snapshot or status update."""
    status = None
    for e in events:
        if e.HasField("task"):
            status = e.task.status
        elif e.HasField("status_update"):
            status = e.status_update.status
    return status


def artifacts(events: list[StreamResponse]) -> dict[str, Any]:
    """artifactId -> the last Artifact with that id (from updates and Task snapshots)."""
    out: dict[str, Any] = {}
    for e in events:
        if e.HasField("task"):
            for a in e.task.artifacts:
                out[a.artifact_id] = a
        elif e.HasField("artifact_update"):
            out[e.artifact_update.artifact.artifact_id] = e.artifact_update.artifact
    return out


# --- the conversation --------------------------------------------------------------


def user_message(data: dict[str, Any], task_id: str, context_id: str) -> Message:
    msg = Message(
        message_id=f"ferry-forms-{uuid.uuid4()}",
        role=Role.ROLE_USER,
        parts=[new_data_part(data, media_type="application/json")],
    )
    if task_id:
        msg.task_id = task_id
    if context_id:
        msg.context_id = context_id
    return msg


def check_turn(
    turn: int,
    events: list[StreamResponse],
    want: int,
    task_id: str,
    context_id: str,
) -> dict[str, Any]:
    """Common checks of one turn's stream; returns the `data` artifact's JSON."""
    check(len(events) > 0, f"turn {turn}: the stream delivered events")
    ids = {event_task_id(e) for e in events}
    check(ids == {task_id}, f"turn {turn}: every event belongs to task {task_id}", ids)
    ctxs = {event_context_id(e) for e in events}
    check(ctxs == {context_id}, f"turn {turn}: every event has contextId {context_id}", ctxs)
    seen = states(events)
    check(
        bool(seen) and seen[-1] == want,
        f"turn {turn}: the stream ends in {state_name(want)}",
        [state_name(s) for s in seen],
    )
    arts = artifacts(events)
    check(
        {"result", "data"} <= set(arts),
        f"turn {turn}: the stream carries the `result` and `data` artifacts",
        sorted(arts),
    )
    for name in ("result", "data"):
        meta = MessageToDict(arts[name].metadata)
        check(
            meta.get("untrusted") is True,
            f"turn {turn}: artifact `{name}` has metadata.untrusted = true",
            meta,
        )
    texts = get_text_parts(arts["result"].parts)
    check(bool(texts) and bool(texts[0].strip()), f"turn {turn}: `result` is non-empty text", texts)
    datas = get_data_parts(arts["data"].parts)
    check(
        len(datas) == 1 and isinstance(datas[0], dict),
        f"turn {turn}: `data` holds one JSON object",
        datas,
    )
    return datas[0]


async def converse(base_url: str, binding: str) -> dict[str, Any]:
    """Runs the three turns; returns the summary."""
    http = httpx.AsyncClient(timeout=httpx.Timeout(STEP_TIMEOUT))
    client = None
    try:
        factory = ClientFactory(
            ClientConfig(streaming=True, httpx_client=http, supported_protocol_bindings=[binding])
        )
        card = await A2ACardResolver(http, base_url).get_agent_card()
        print(f"  card: name={card.name!r} streaming={card.capabilities.streaming}", flush=True)
        check(card.capabilities.streaming, "agent card declares capabilities.streaming")
        client = factory.create(card)

        with ShopSite(SIGNUP_HTML, WELCOME_HTML) as site:
            print(f"  site: {site.url('/signup')} (127.0.0.1:{site.port})", flush=True)
            turns = [
                (
                    {
                        "url": site.url("/signup"),
                        "values": {"Full name": "Ada Lovelace", "Email": "ada@example.com"},
                        "submit": True,
                    },
                    TaskState.TASK_STATE_INPUT_REQUIRED,
                ),
                (
                    {"values": {"Password": "correct horse", "I accept the terms": True}, "submit": True},
                    TaskState.TASK_STATE_INPUT_REQUIRED,
                ),
                ({"confirm": True}, TaskState.TASK_STATE_COMPLETED),
            ]
            task_id = context_id = ""
            summary_states: list[str] = []
            outcome_title = ""
            for turn, (data, want) in enumerate(turns, start=1):
                print(f"  turn {turn}: {json.dumps(data)}", flush=True)
                events = await collect(
                    client.send_message(SendMessageRequest(message=user_message(data, task_id, context_id))),
                    f"turn {turn} stream",
                    STEP_TIMEOUT,
                )
                if turn == 1:
                    check(
                        bool(events) and events[0].HasField("task"),
                        "turn 1: the first event is a Task",
                        [describe(e) for e in events[:1]],
                    )
                    task_id, context_id = events[0].task.id, events[0].task.context_id
                    check(bool(task_id) and bool(context_id), "turn 1: task id and contextId are non-empty")
                report = check_turn(turn, events, want, task_id, context_id)
                status = final_status(events)
                status_text = " ".join(get_text_parts(status.message.parts)) if status.HasField("message") else ""
                print(f"    status message: {status_text!r}", flush=True)
                print(
                    "    data: "
                    + json.dumps(
                        {k: report.get(k) for k in ("missing", "pendingSubmit", "submitted", "outcome", "fieldErrors")}
                    ),
                    flush=True,
                )
                posts = site.post_snapshot()

                if turn == 1:
                    seen = states(events)
                    check(
                        TaskState.TASK_STATE_WORKING in seen[:-1],
                        "turn 1: a WORKING status update came before the final state",
                        [state_name(s) for s in seen],
                    )
                    check(
                        any(
                            e.HasField("status_update")
                            and e.status_update.status.state == TaskState.TASK_STATE_WORKING
                            for e in events
                        ),
                        "turn 1: the WORKING state arrived as a status update",
                    )
                    missing = report.get("missing")
                    check(
                        isinstance(missing, list) and sorted(missing) == sorted(["Password", "I accept the terms"]),
                        'turn 1: data.missing is ["Password", "I accept the terms"]',
                        missing,
                    )
                    check(report.get("pendingSubmit") is False, "turn 1: data.pendingSubmit is false", report.get("pendingSubmit"))
                    check(report.get("submitted") is False, "turn 1: data.submitted is false", report.get("submitted"))
                    check(
                        "Password" in status_text and "I accept the terms" in status_text,
                        "turn 1: the status message names the missing fields",
                        status_text,
                    )
                    check(site.gets.count("/signup") >= 1, "turn 1: the browser loaded /signup", site.gets)
                elif turn == 2:
                    check(report.get("missing") == [], "turn 2: data.missing is []", report.get("missing"))
                    check(report.get("pendingSubmit") is True, "turn 2: data.pendingSubmit is true", report.get("pendingSubmit"))
                    check(report.get("submitted") is False, "turn 2: data.submitted is false", report.get("submitted"))
                elif turn == 3:
                    check(report.get("submitted") is True, "turn 3: data.submitted is true", report.get("submitted"))
                    check(report.get("pendingSubmit") is False, "turn 3: data.pendingSubmit is false", report.get("pendingSubmit"))
                    outcome = report.get("outcome") or {}
                    outcome_title = outcome.get("title", "")
                    check(
                        outcome_title == WELCOME_TITLE,
                        f"turn 3: data.outcome.title is {WELCOME_TITLE!r}",
                        outcome,
                    )

                if turn < 3:
                    check(posts == [], f"turn {turn}: nothing was POSTed yet", posts)
                summary_states.append(state_name(seen_final(events)))

            posts = site.post_snapshot()
            check(
                len(posts) == 1 and posts[0][0] == "/submit",
                "after turn 3: exactly one POST, to /submit",
                posts,
            )
            body = parse_qs(posts[0][1], keep_blank_values=True)
            expected = {
                "name": "Ada Lovelace",
                "email": "ada@example.com",
                "password": "correct horse",
                "terms": "yes",
            }
            got = {k: body.get(k) for k in expected}
            check(
                all(body.get(k) == [v] for k, v in expected.items()),
                "after turn 3: the POST body holds name, email, password and terms",
                got,
            )
            return {
                "ok": True,
                "binding": binding,
                "taskId": task_id,
                "contextId": context_id,
                "turns": summary_states,
                "outcomeTitle": outcome_title,
                "posted": sorted(body),
            }
    finally:
        if client is not None:
            try:
                await client.close()
            except Exception:  # noqa: BLE001 - best-effort cleanup
                pass
        await http.aclose()


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(f"usage: {sys.argv[0]} BASE_URL [JSONRPC|HTTP+JSON]", file=sys.stderr)
        return 2
    base_url = sys.argv[1].rstrip("/")
    binding = sys.argv[2] if len(sys.argv) == 3 else TransportProtocol.JSONRPC.value
    if binding not in (TransportProtocol.JSONRPC.value, TransportProtocol.HTTP_JSON.value):
        print(f"unknown binding {binding!r}", file=sys.stderr)
        return 2
    sdk = importlib.metadata.version("a2a-sdk")
    print(f"forms conversation: base={base_url} binding={binding} a2a-sdk={sdk}", flush=True)
    try:
        summary = asyncio.run(asyncio.wait_for(converse(base_url, binding), OVERALL_TIMEOUT))
    except CheckFailed as e:
        print(f"FAIL: {e}", flush=True)
        return 1
    except (asyncio.TimeoutError, TimeoutError):
        print(f"FAIL: the conversation did not finish within {OVERALL_TIMEOUT:.0f}s", flush=True)
        return 3
    except Exception as e:  # noqa: BLE001 - report anything unexpected clearly
        traceback.print_exc()
        print(f"FAIL: unexpected {type(e).__name__}: {e}", flush=True)
        return 2
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
