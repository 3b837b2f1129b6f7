#!/usr/bin/env python3
"""v0.3 interop client: the official Python SDK of A2A v0.3 drives a ferry server.

``a2a-sdk`` 0.3 (see ``requirements-v03.txt``; it lives in its own venv, next to
the 1.x one) knows nothing of v1.0: it reads the card's v0.3 members, calls
``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel`` and
``tasks/resubscribe``, and parses every answer with its own v0.3 models. The
server runs ``ferry serve --agent conformance``. One ``ok:`` line per check;
exit 0 on success, 1 on a failed check, 2 on an unexpected exception, 3 on the
``--timeout``.

Checks, in order:

* the card parses as a v0.3 ``AgentCard``: ``url`` is the JSON-RPC interface,
  ``protocolVersion`` 0.3.0, ``preferredTransport`` JSONRPC;
* a blocking ``message/send`` (streaming off) returns a completed task whose
  artifact echoes the text and the data part;
* three ``message/stream`` turns on one task (``ferry-turns-3``): the first
  stream starts with a ``task``, each ends with a status update marked
  ``final`` (input-required, input-required, completed);
* ``ferry-hold``: a stream is left after the artifact ``held``;
  ``tasks/resubscribe`` follows the task while ``tasks/cancel`` cancels it, and
  the resubscription ends with a final ``canceled`` status; ``tasks/get`` then
  says canceled and returns the history;
* ``tasks/get`` of an unknown id is JSON-RPC error -32001;
  ``tasks/pushNotificationConfig/set`` gives an id and ``get`` shows the config
  without its token; a loopback webhook is refused (-32602);
* no request carried an ``A2A-Version`` header (v0.3 clients send none).

With ``--transport HTTP+JSON`` the same checks run over v0.3's REST binding
(``/v1/message:send`` and friends under the card's HTTP+JSON interface, v0.3
ProtoJSON bodies): the card must list that interface, and the two errors are
HTTP statuses (404 for the unknown task, 400 for the loopback webhook) instead
of JSON-RPC codes.

Usage::

    v03_client.py --base-url http://127.0.0.1:PORT [--transport JSONRPC|HTTP+JSON]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import sys
import traceback
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.types import (
    DataPart,
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    TransportProtocol,
)


class CheckFailed(Exception):
    """A check did not hold."""


def check(cond: bool, what: str) -> None:
    if not cond:
        raise CheckFailed(what)
    print(f"ok: {what}", flush=True)


def message(message_id: str, parts: list[Part], task: Task | None = None) -> Message:
    return Message(
        message_id=message_id,
        role=Role.user,
        parts=parts,
        task_id=task.id if task else None,
        context_id=task.context_id if task else None,
    )


def text(t: str) -> Part:
    return Part(root=TextPart(text=t))


async def collect(stream) -> list:
    """The events of one stream: (task, update) tuples or messages."""
    return [event async for event in stream]


def updates(events: list) -> list:
    return [e[1] for e in events if isinstance(e, tuple) and e[1] is not None]


def error_code(e: Exception, rest: bool) -> int | None:
    """The JSON-RPC code of a JSON-RPC error, the HTTP status of a REST one."""
    if rest and isinstance(e, A2AClientHTTPError):
        return e.status_code
    if not rest and isinstance(e, A2AClientJSONRPCError):
        return e.error.code
    return None


async def run(base_url: str, transport: str) -> None:
    rest = transport == TransportProtocol.http_json.value
    seen_versions: list[str | None] = []

    async def observe(request: httpx.Request) -> None:
        seen_versions.append(request.headers.get("a2a-version"))

    async with httpx.AsyncClient(timeout=15, event_hooks={"request": [observe]}) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        check(card.url == f"{base_url}/jsonrpc", f"card url is the JSON-RPC interface ({card.url})")
        check(card.protocol_version == "0.3.0", "card protocolVersion is 0.3.0")
        check(card.preferred_transport == "JSONRPC", "card preferredTransport is JSONRPC")
        if rest:
            check(
                any(
                    i.transport == transport and i.url == f"{base_url}/rest"
                    for i in card.additional_interfaces or []
                ),
                f"card lists the HTTP+JSON interface ({card.additional_interfaces})",
            )

        transports = [TransportProtocol(transport)]

        def client(streaming: bool):
            config = ClientConfig(
                streaming=streaming, httpx_client=http, supported_transports=transports
            )
            return ClientFactory(config).create(card)

        unary = client(streaming=False)
        streaming = client(streaming=True)

        # A blocking message/send.
        sent = message(
            f"v03-echo-{uuid.uuid4()}",
            [text("hello v0.3"), Part(root=DataPart(data={"n": 1}))],
        )
        [(task, _)] = await collect(unary.send_message(sent))
        check(task.status.state == TaskState.completed, "message/send: the task completed")
        echoed = [p.root for a in task.artifacts or [] for p in a.parts]
        check(
            "hello v0.3" in "".join(p.text for p in echoed if isinstance(p, TextPart)),
            "message/send: the artifact echoes the text",
        )
        check(
            any(isinstance(p, DataPart) and p.data == {"n": 1} for p in echoed),
            "message/send: the artifact echoes the data part",
        )

        # Three streamed turns on one task.
        first = message(f"ferry-turns-3-{uuid.uuid4()}", [text("turn 1")])
        events = await collect(streaming.send_message(first))
        check(len(events) >= 2, f"message/stream turn 1: {len(events)} events")
        task = events[-1][0]
        last = updates(events)[-1]
        check(
            isinstance(last, TaskStatusUpdateEvent)
            and last.status.state == TaskState.input_required
            and last.final,
            "message/stream turn 1 ends final at input-required",
        )
        for turn, want in [(2, TaskState.input_required), (3, TaskState.completed)]:
            follow = message(f"ferry-turns-3-{uuid.uuid4()}", [text(f"turn {turn}")], task)
            events = await collect(streaming.send_message(follow))
            last = updates(events)[-1]
            check(
                isinstance(last, TaskStatusUpdateEvent)
                and last.status.state == want
                and last.final
                and last.task_id == task.id,
                f"message/stream turn {turn} ends final at {want.value} on the same task",
            )
            check(
                any(isinstance(u, TaskArtifactUpdateEvent) for u in updates(events)),
                f"message/stream turn {turn} carries an artifact",
            )

        # Hold, leave, resubscribe, cancel.
        hold = message(f"ferry-hold-{uuid.uuid4()}", [text("hold")])
        stream = streaming.send_message(hold)
        held = None
        async for event in stream:
            if isinstance(event, tuple) and isinstance(event[1], TaskArtifactUpdateEvent):
                held = event[0]
                break
        await stream.aclose()
        check(held is not None and held.status.state == TaskState.working, "ferry-hold: working, artifact held")

        resubscribed: list = []
        subscribed = asyncio.Event()

        async def follow() -> None:
            async for event in streaming.resubscribe(TaskIdParams(id=held.id)):
                resubscribed.append(event)
                subscribed.set()

        follower = asyncio.create_task(follow())
        await subscribed.wait()
        canceled = await unary.cancel_task(TaskIdParams(id=held.id))
        check(canceled.status.state == TaskState.canceled, "tasks/cancel: canceled")
        await follower
        last = updates(resubscribed)[-1]
        check(
            isinstance(last, TaskStatusUpdateEvent)
            and last.status.state == TaskState.canceled
            and last.final,
            "tasks/resubscribe ends final at canceled",
        )
        got = await unary.get_task(TaskQueryParams(id=held.id))
        check(
            got.status.state == TaskState.canceled and bool(got.history),
            "tasks/get: canceled, with its history",
        )

        # Typed errors.
        not_found, unsupported = (404, 400) if rest else (-32001, -32003)
        try:
            await unary.get_task(TaskQueryParams(id=f"no-such-{uuid.uuid4()}"))
            check(False, "tasks/get of an unknown task fails")
        except (A2AClientJSONRPCError, A2AClientHTTPError) as e:
            code = error_code(e, rest)
            check(code == not_found, f"tasks/get unknown: {not_found} ({code})")
        made = await unary.set_task_callback(
            TaskPushNotificationConfig(
                task_id=held.id,
                push_notification_config=PushNotificationConfig(
                    url="https://hooks.example/a2a", token="v03-token"
                ),
            )
        )
        config_id = made.push_notification_config.id
        check(bool(config_id), f"pushNotificationConfig/set gives an id ({config_id})")
        # A config inline with message/send, read back by its id. Over HTTP+JSON a2a-sdk
        # 0.3.26 cannot send one: its REST transport converts the configuration it was given
        # to a dict and then reads `.authentication` of it (AttributeError in
        # proto_utils.push_notification_config), so only JSON-RPC checks it.
        if not rest:
            inline = PushNotificationConfig(id="inline-v03", url="https://hooks.example/inline", token="v03-token")
            [(pushed, _)] = await collect(
                unary.send_message(
                    message(f"v03-push-{uuid.uuid4()}", [text("notify me")]),
                    configuration=MessageSendConfiguration(push_notification_config=inline),
                )
            )
            inline_got = await unary.get_task_callback(
                GetTaskPushNotificationConfigParams(id=pushed.id, push_notification_config_id="inline-v03")
            )
            check(
                inline_got.push_notification_config.url == "https://hooks.example/inline",
                f"message/send's inline pushNotificationConfig is kept ({inline_got})",
            )
        got = await unary.get_task_callback(
            GetTaskPushNotificationConfigParams(id=held.id, push_notification_config_id=config_id)
        )
        check(
            got.push_notification_config.url == "https://hooks.example/a2a"
            and not got.push_notification_config.token,
            f"pushNotificationConfig/get shows the config without its token ({got})",
        )
        try:
            await unary.set_task_callback(
                TaskPushNotificationConfig(
                    task_id=held.id,
                    push_notification_config=PushNotificationConfig(url="http://127.0.0.1:9/hook"),
                )
            )
            check(False, "a loopback webhook is refused on this server")
        except (A2AClientJSONRPCError, A2AClientHTTPError) as e:
            code = error_code(e, rest)
            invalid = 400 if rest else -32602
            check(code == invalid, f"pushNotificationConfig/set loopback: {invalid} ({code})")

    check(
        all(v is None for v in seen_versions),
        f"no request carried A2A-Version ({len(seen_versions)} requests)",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument(
        "--transport",
        default=TransportProtocol.jsonrpc.value,
        choices=[TransportProtocol.jsonrpc.value, TransportProtocol.http_json.value],
    )
    args = parser.parse_args()
    print(f"a2a-sdk {importlib.metadata.version('a2a-sdk')} over {args.transport}", flush=True)
    try:
        run_checks = run(args.base_url.rstrip("/"), args.transport)
        asyncio.run(asyncio.wait_for(run_checks, args.timeout))
    except CheckFailed as e:
        print(f"FAIL: {e}", flush=True)
        return 1
    except (asyncio.TimeoutError, TimeoutError):
        print(f"FAIL: not done within {args.timeout} s", flush=True)
        return 3
    except Exception:  # noqa: BLE001 - any other failure is reported whole
        print("FAIL: unexpected exception", flush=True)
        traceback.print_exc()
        return 2
    print("PASS", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
