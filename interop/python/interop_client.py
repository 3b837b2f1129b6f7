#!/usr/bin/env python3
"""Interop client: drive a ferry A2A server with the official Python SDK.

The official A2A Python SDK (``a2a-sdk`` 1.3.0, see ``requirements.txt``)
resolves the server's agent card, picks the interface of the requested
protocol binding (``JSONRPC``, ``HTTP+JSON`` or ``GRPC``) and runs one scenario
against it, asserting on every response. It prints one ``ok:`` line per check and
exits 0 on success; on failure it prints ``FAIL: ...`` and exits non-zero:

* 1: an assertion failed (the server answered, but wrongly);
* 2: an unexpected exception (connection refused, SDK parse error, ...);
* 3: the scenario did not finish within ``--timeout`` seconds.

Scenarios (the server side contract; see ``crates/ferry/tests/interop_python.rs``):

``echo``  (``ferry serve --agent echo``)
    Blocking SendMessage with a text part and a data part returns a COMPLETED
    task whose artifact echoes both parts.
``turns`` (``ferry serve --agent conformance``)
    Three streaming SendMessage turns on one task (messageId prefix
    ``ferry-turns-3``): INPUT_REQUIRED, INPUT_REQUIRED, COMPLETED; each stream
    starts with a Task and carries an artifact naming its turn.
``tasks`` (``ferry serve --agent conformance``)
    GetTask, ListTasks by contextId, SubscribeToTask from a second client while
    a follow-up message completes the task, CancelTask, and the typed errors for
    a second cancel and an unknown task id.
``push``  (``ferry serve --agent echo``)
    A push config inline with a send, then Create (with an id and credentials),
    Get and List (neither token nor credentials shown back), Delete twice, and
    Get of the deleted config is TaskNotFoundError.

Every HTTP request made by the SDK (card fetch included) is observed through an
httpx event hook: it must carry ``A2A-Version: 1.0`` (the SDK adds the header
itself; this script never sets it), and every A2A call must go to the card's
interface URL of the requested binding.

Over ``GRPC`` the card still comes over HTTP (observed the same way), and the
A2A calls go over a plaintext HTTP/2 channel (``grpc.aio.insecure_channel``) to
the card's ``GRPC`` interface, ``host:port``, which ferry serves on its HTTP
port. A client interceptor on that channel observes every call instead of the
httpx hook: each must carry the ``a2a-version: 1.0`` metadata (again added by
the SDK) and call an ``/lf.a2a.v1.A2AService/`` method on the card's target,
and no A2A call may go over HTTP. The typed errors of ``tasks`` arrive the same
way (the SDK maps the status's ``ErrorInfo.reason``); over gRPC the script also
checks the status code under them (NOT_FOUND, FAILED_PRECONDITION).

Usage::

    interop_client.py --base-url http://127.0.0.1:PORT --binding JSONRPC --scenario echo
    interop_client.py --base-url http://127.0.0.1:PORT --binding GRPC --scenario turns
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import ssl
import sys
import traceback
import uuid

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.helpers import get_data_parts, get_text_parts, new_data_part, new_text_part
from a2a.types.a2a_pb2 import (
    AgentCard,
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.constants import VERSION_HEADER, TransportProtocol
from a2a.utils.errors import A2AError, TaskNotCancelableError, TaskNotFoundError
from stream_events import CheckFailed, check, collect, describe, event_task_id, state_name

EXPECTED_VERSION = "1.0"
BINDINGS = (TransportProtocol.JSONRPC.value, TransportProtocol.HTTP_JSON.value, TransportProtocol.GRPC.value)
GRPC = TransportProtocol.GRPC.value
# Every gRPC call of the binding is a method of this service.
GRPC_SERVICE_PREFIX = "/lf.a2a.v1.A2AService/"
SCENARIOS = ("echo", "turns", "tasks", "push")
# Per-step limit for waiting on a stream event or a stream end; the overall
# scenario limit is --timeout.
STEP_TIMEOUT = 10.0


@dataclass
class Observed:
    """What the SDK sent: every HTTP request (httpx event hook) and every gRPC call
    (channel interceptor)."""

    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    # (target, method path, a2a-version metadata) per gRPC call.
    grpc_calls: list[tuple[str, str, str | None]] = field(default_factory=list)

    async def hook(self, request: httpx.Request) -> None:
        """httpx request hook: record method, URL and the A2A-Version header."""
        self.requests.append((request.method, str(request.url), request.headers.get(VERSION_HEADER)))

    def record_grpc(self, target: str, details: Any) -> None:
        """Records one gRPC call from its ClientCallDetails."""
        method = details.method.decode() if isinstance(details.method, bytes) else str(details.method)
        version = None
        for key, value in details.metadata or ():
            if key.lower() == VERSION_HEADER.lower():
                version = value.decode() if isinstance(value, bytes) else value
        self.grpc_calls.append((target, method, version))


def grpc_channel_factory(observed: Observed, ca_file: str | None = None) -> Any:
    """A ClientConfig.grpc_channel_factory: a channel to the card's `host:port` (plaintext,
    or TLS trusting the CA of `ca_file`), with interceptors that report every call to
    `observed`.

    grpc is imported here, not at the top, so the HTTP bindings run without it.
    """
    import grpc.aio  # noqa: PLC0415 - only the GRPC binding needs it

    # Two classes: grpc.aio files an interceptor under the first of its kinds only.
    class UnaryRecorder(grpc.aio.UnaryUnaryClientInterceptor):
        def __init__(self, target: str) -> None:
            self.target = target

        async def intercept_unary_unary(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
            observed.record_grpc(self.target, client_call_details)
            return await continuation(client_call_details, request)

    class StreamRecorder(grpc.aio.UnaryStreamClientInterceptor):
        def __init__(self, target: str) -> None:
            self.target = target

        async def intercept_unary_stream(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
            observed.record_grpc(self.target, client_call_details)
            # The call itself, not a generator: the SDK reads streams with `call.read()`.
            return await continuation(client_call_details, request)

    def factory(url: str) -> grpc.aio.Channel:
        interceptors = [UnaryRecorder(url), StreamRecorder(url)]
        if ca_file:
            with open(ca_file, "rb") as f:
                credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
            return grpc.aio.secure_channel(url, credentials, interceptors=interceptors)
        return grpc.aio.insecure_channel(url, interceptors=interceptors)

    return factory


class Harness:
    """The SDK plumbing shared by the scenarios: card, clients, observation."""

    def __init__(self, base_url: str, binding: str, ca_file: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.binding = binding
        # A private CA to trust (a ferry serving TLS with a test certificate).
        self.ca_file = ca_file
        self.observed = Observed()
        self._http_clients: list[httpx.AsyncClient] = []
        self._clients: list[Client] = []
        self.card: AgentCard | None = None
        self.interface_url = ""

    def _new_http_client(self) -> httpx.AsyncClient:
        """A fresh httpx client (own connection pool) that reports to `observed`."""
        verify: Any = ssl.create_default_context(cafile=self.ca_file) if self.ca_file else True
        http = httpx.AsyncClient(
            verify=verify,
            timeout=httpx.Timeout(STEP_TIMEOUT),
            event_hooks={"request": [self.observed.hook]},
        )
        self._http_clients.append(http)
        return http

    def _factory(self, http: httpx.AsyncClient, *, streaming: bool) -> ClientFactory:
        """A ClientFactory that only accepts the requested binding.

        The factory itself adds the ``A2A-Version`` default header to `http`.
        """
        config = ClientConfig(
            streaming=streaming,
            httpx_client=http,
            grpc_channel_factory=grpc_channel_factory(self.observed, self.ca_file) if self.binding == GRPC else None,
            supported_protocol_bindings=[self.binding],
        )
        return ClientFactory(config)

    async def resolve_card(self) -> AgentCard:
        """Fetches the agent card with the SDK's A2ACardResolver and checks it."""
        http = self._new_http_client()
        self._factory(http, streaming=True)  # installs the A2A-Version header on `http`
        resolver = A2ACardResolver(http, self.base_url)
        card = await resolver.get_agent_card()
        self.card = card
        print(f"  card: name={card.name!r} streaming={card.capabilities.streaming}", flush=True)
        bindings = [(i.protocol_binding, i.url, i.protocol_version) for i in card.supported_interfaces]
        for b in bindings:
            print(f"  card interface: {b[0]} {b[1]} (protocolVersion {b[2]!r})", flush=True)
        check(
            self.binding in [b[0] for b in bindings],
            f"agent card declares a {self.binding} interface",
            bindings,
        )
        self.interface_url = next(b[1] for b in bindings if b[0] == self.binding)
        if self.binding == GRPC:
            # A gRPC target is `host:port`, no scheme; ferry serves it on its HTTP port.
            netloc = urlsplit(self.base_url).netloc
            check(
                self.interface_url == netloc,
                f"the GRPC interface is {netloc}, the HTTP port (host:port, no scheme)",
                self.interface_url,
            )
        return card

    def client(self, *, streaming: bool, interceptors: list | None = None) -> Client:
        """A new SDK client instance (own httpx client) for the requested binding."""
        assert self.card is not None, "resolve_card() first"
        factory = self._factory(self._new_http_client(), streaming=streaming)
        client = factory.create(self.card, interceptors)
        self._clients.append(client)
        return client

    def check_requests(self) -> None:
        """Every request carried A2A-Version: 1.0 and used the chosen interface."""
        if self.binding == GRPC:
            self.check_grpc_calls()
            return
        reqs = self.observed.requests
        check(len(reqs) > 0, "the SDK sent HTTP requests (observed by the hook)")
        bad_version = [r for r in reqs if r[2] != EXPECTED_VERSION]
        check(
            not bad_version,
            f"all {len(reqs)} requests carried {VERSION_HEADER}: {EXPECTED_VERSION}",
            bad_version,
        )
        card_url = f"{self.base_url}/.well-known/agent-card.json"
        calls = [r for r in reqs if r[1] != card_url]
        if self.binding == TransportProtocol.JSONRPC.value:
            off = [r for r in calls if r[1] != self.interface_url or r[0] != "POST"]
            what = f"all {len(calls)} A2A calls were JSON-RPC POSTs to {self.interface_url}"
        else:
            prefix = self.interface_url.rstrip("/") + "/"
            off = [r for r in calls if not r[1].startswith(prefix)]
            what = f"all {len(calls)} A2A calls were HTTP+JSON requests under {prefix}"
        check(len(calls) > 0 and not off, what, off or "no A2A calls")

    def check_grpc_calls(self) -> None:
        """Over gRPC: only the card came over HTTP; every call carried the a2a-version
        metadata and called an A2AService method on the card's target."""
        card_url = f"{self.base_url}/.well-known/agent-card.json"
        reqs = self.observed.requests
        check(
            len(reqs) > 0 and all(r[1] == card_url and r[2] == EXPECTED_VERSION for r in reqs),
            f"HTTP carried only card fetches, each with {VERSION_HEADER}: {EXPECTED_VERSION}",
            reqs,
        )
        calls = self.observed.grpc_calls
        bad_version = [c for c in calls if c[2] != EXPECTED_VERSION]
        check(
            len(calls) > 0 and not bad_version,
            f"all {len(calls)} gRPC calls carried {VERSION_HEADER.lower()}: {EXPECTED_VERSION} metadata",
            bad_version or "no gRPC calls",
        )
        off = [c for c in calls if c[0] != self.interface_url or not c[1].startswith(GRPC_SERVICE_PREFIX)]
        check(
            not off,
            f"all {len(calls)} gRPC calls were {GRPC_SERVICE_PREFIX}* methods on {self.interface_url}",
            off,
        )
        print(f"  gRPC methods called: {sorted({c[1] for c in calls})}", flush=True)

    async def close(self) -> None:
        """Closes every SDK client and httpx client we created."""
        for c in self._clients:
            try:
                await c.close()
            except Exception:  # noqa: BLE001 - best-effort cleanup
                pass
        for h in self._http_clients:
            await h.aclose()


# --- message helpers -----------------------------------------------------------


def user_message(
    message_id: str,
    parts: list[Any],
    *,
    task_id: str = "",
    context_id: str = "",
) -> Message:
    """A ROLE_USER message; empty ids are left unset."""
    msg = Message(message_id=message_id, role=Role.ROLE_USER, parts=parts)
    if task_id:
        msg.task_id = task_id
    if context_id:
        msg.context_id = context_id
    return msg


async def send_blocking(client: Client, message: Message) -> Task:
    """Blocking (non-streaming) SendMessage; the result must be a Task."""
    events = [e async for e in client.send_message(SendMessageRequest(message=message))]
    check(
        len(events) == 1 and events[0].HasField("task"),
        f"blocking SendMessage {message.message_id[:40]} returned a Task",
        [describe(e) for e in events],
    )
    return events[0].task


def expect_error(
    exc: BaseException | None, cls: type[A2AError], what: str, *, grpc_code: str | None = None
) -> None:
    """Checks that the SDK raised the typed A2A error `cls`.

    Over gRPC the SDK raises the same typed error (mapped from the status's
    ``ErrorInfo.reason``) `from` the grpc.aio.AioRpcError; with `grpc_code` given,
    that status code is checked too (the binding's error table: A2A spec, gRPC
    error mapping).
    """
    check(
        isinstance(exc, cls),
        f"{what} -> {cls.__name__}",
        "no error" if exc is None else repr(exc),
    )
    if grpc_code is not None:
        cause = exc.__cause__ if exc is not None else None
        code = getattr(cause, "code", None)
        name = code().name if callable(code) else repr(cause)
        check(name == grpc_code, f"{what}: gRPC status {grpc_code}", name)


# --- scenarios -------------------------------------------------------------------


async def scenario_echo(h: Harness) -> None:
    """Blocking send of text + data; the echo agent's artifact repeats both."""
    client = h.client(streaming=False)
    msg = user_message(
        f"ferry-echo-{uuid.uuid4()}",
        [new_text_part("hello ferry"), new_data_part({"n": 1})],
    )
    task = await send_blocking(client, msg)
    check(bool(task.id), "task.id is non-empty", task.id)
    check(bool(task.context_id), "task.contextId is non-empty", task.context_id)
    check(
        task.status.state == TaskState.TASK_STATE_COMPLETED,
        "task state is TASK_STATE_COMPLETED",
        state_name(task.status.state),
    )
    check(len(task.artifacts) >= 1, "task has at least one artifact", len(task.artifacts))
    texts = [t for a in task.artifacts for t in get_text_parts(a.parts)]
    datas = [d for a in task.artifacts for d in get_data_parts(a.parts)]
    check("hello ferry" in texts, 'an artifact has the text part "hello ferry"', texts)
    # google.protobuf.Value numbers are doubles: {"n": 1} reads back as {"n": 1.0}.
    check({"n": 1} in datas, 'an artifact has the data part {"n": 1}', datas)


TURN_STATES = {
    1: TaskState.TASK_STATE_INPUT_REQUIRED,
    2: TaskState.TASK_STATE_INPUT_REQUIRED,
    3: TaskState.TASK_STATE_COMPLETED,
}


def final_state(events: list[StreamResponse]) -> int:
    """The last task state a stream reported (Task snapshot or status update)."""
    state = TaskState.TASK_STATE_UNSPECIFIED
    for e in events:
        if e.HasField("task"):
            state = e.task.status.state
        elif e.HasField("status_update"):
            state = e.status_update.status.state
    return state


async def scenario_turns(h: Harness) -> None:
    """Three streaming turns on one task: INPUT_REQUIRED, INPUT_REQUIRED, COMPLETED."""
    assert h.card is not None
    check(h.card.capabilities.streaming, "agent card declares capabilities.streaming")
    client = h.client(streaming=True)
    task_id = context_id = ""
    for turn in (1, 2, 3):
        print(f"  turn {turn}:", flush=True)
        msg = user_message(
            f"ferry-turns-3-{uuid.uuid4()}",
            # No "turn N" in our own text: the artifact check must see the agent's words.
            [new_text_part(f"ferry interop message {turn} of 3")],
            task_id=task_id,
            context_id=context_id,
        )
        events = await collect(
            client.send_message(SendMessageRequest(message=msg)), f"turn {turn} stream", STEP_TIMEOUT
        )
        check(len(events) > 0, f"turn {turn}: the stream delivered events")
        check(
            events[0].HasField("task"),
            f"turn {turn}: the first event is a Task",
            describe(events[0]),
        )
        if turn == 1:
            task_id, context_id = events[0].task.id, events[0].task.context_id
            check(bool(task_id) and bool(context_id), "turn 1: task id and contextId are non-empty")
        ids = {event_task_id(e) for e in events}
        check(ids == {task_id}, f"turn {turn}: every event belongs to task {task_id}", ids)
        check(
            events[0].task.context_id == context_id,
            f"turn {turn}: the Task keeps contextId {context_id}",
            events[0].task.context_id,
        )
        artifact_texts = [
            t for e in events if e.HasField("artifact_update") for t in get_text_parts(e.artifact_update.artifact.parts)
        ]
        check(
            any(f"turn {turn}" in t.lower() for t in artifact_texts),
            f'turn {turn}: an artifact update says "turn {turn}"',
            artifact_texts,
        )
        state = final_state(events)
        check(
            state == TURN_STATES[turn],
            f"turn {turn}: the stream ends in {state_name(TURN_STATES[turn])}",
            state_name(state),
        )


async def scenario_tasks(h: Harness) -> None:
    """GetTask, ListTasks, SubscribeToTask (second client), CancelTask and typed errors."""
    assert h.card is not None
    check(h.card.capabilities.streaming, "agent card declares capabilities.streaming")
    client = h.client(streaming=False)
    subscriber = h.client(streaming=True)  # the second, independent client instance

    # 1. A task waiting for input.
    task = await send_blocking(client, user_message(f"tck-input-required-{uuid.uuid4()}", [new_text_part("need input")]))
    tid, ctx = task.id, task.context_id
    check(
        task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
        "tck-input-required: task state is TASK_STATE_INPUT_REQUIRED",
        state_name(task.status.state),
    )
    check(bool(tid) and bool(ctx), "task id and contextId are non-empty")

    # 2. GetTask.
    got = await client.get_task(GetTaskRequest(id=tid))
    check(
        (got.id, got.context_id, got.status.state) == (tid, ctx, TaskState.TASK_STATE_INPUT_REQUIRED),
        "GetTask returns the same id, contextId and INPUT_REQUIRED state",
        (got.id, got.context_id, state_name(got.status.state)),
    )

    # 3. ListTasks by contextId.
    listed = await client.list_tasks(ListTasksRequest(context_id=ctx))
    check(
        [t.id for t in listed.tasks] == [tid],
        "ListTasks(contextId) returns exactly that task",
        [t.id for t in listed.tasks],
    )

    # 4. SubscribeToTask from the second client while the first completes the task.
    sub_events: list[StreamResponse] = []
    first_seen = asyncio.Event()

    async def run_subscription() -> None:
        async for event in subscriber.subscribe(SubscribeToTaskRequest(id=tid)):
            print(f"    subscriber event: {describe(event)}", flush=True)
            sub_events.append(event)
            first_seen.set()

    sub = asyncio.create_task(run_subscription())
    waiter = asyncio.create_task(first_seen.wait())
    done, _ = await asyncio.wait({sub, waiter}, timeout=STEP_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if sub in done and sub.exception() is not None:
        raise CheckFailed(f"SubscribeToTask failed: {sub.exception()!r}")
    if not sub_events:
        sub.cancel()
        raise CheckFailed(f"SubscribeToTask delivered no event within {STEP_TIMEOUT:.0f}s")
    first = sub_events[0]
    check(
        first.HasField("task") and first.task.id == tid,
        "SubscribeToTask: the first event is the Task",
        describe(first),
    )
    check(
        first.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
        "SubscribeToTask: the Task is in TASK_STATE_INPUT_REQUIRED",
        state_name(first.task.status.state),
    )
    check(not sub.done(), "SubscribeToTask: the stream stays open on an INPUT_REQUIRED task")

    # Follow-up with only taskId: the server infers the contextId from the task.
    done_task = await send_blocking(client, user_message(f"tck-complete-task-{uuid.uuid4()}", [new_text_part("here you go")], task_id=tid))
    check(
        (done_task.id, done_task.context_id, done_task.status.state) == (tid, ctx, TaskState.TASK_STATE_COMPLETED),
        "follow-up tck-complete-task (taskId only) returns the same task, COMPLETED, same contextId",
        (done_task.id, done_task.context_id, state_name(done_task.status.state)),
    )
    try:
        await asyncio.wait_for(sub, STEP_TIMEOUT)
    except asyncio.TimeoutError:
        raise CheckFailed(
            f"SubscribeToTask: stream did not end within {STEP_TIMEOUT:.0f}s after the task completed; "
            f"events: {[describe(e) for e in sub_events]}"
        ) from None
    check(True, "SubscribeToTask: the stream ended after the terminal state")
    completed = [
        i
        for i, e in enumerate(sub_events)
        if e.HasField("status_update") and e.status_update.status.state == TaskState.TASK_STATE_COMPLETED
    ]
    check(bool(completed), "SubscribeToTask: a TASK_STATE_COMPLETED status update arrived", [describe(e) for e in sub_events])
    check(
        completed[0] == len(sub_events) - 1,
        "SubscribeToTask: the COMPLETED status update is the last event",
        [describe(e) for e in sub_events],
    )
    check(
        all(event_task_id(e) == tid for e in sub_events),
        f"SubscribeToTask: every event belongs to task {tid}",
    )

    # 5. CancelTask.
    task2 = await send_blocking(client, user_message(f"tck-input-required-{uuid.uuid4()}", [new_text_part("cancel me")]))
    check(
        task2.status.state == TaskState.TASK_STATE_INPUT_REQUIRED and task2.id != tid,
        "a second tck-input-required task is INPUT_REQUIRED (new id)",
        (task2.id, state_name(task2.status.state)),
    )
    canceled = await client.cancel_task(CancelTaskRequest(id=task2.id))
    check(
        (canceled.id, canceled.status.state) == (task2.id, TaskState.TASK_STATE_CANCELED),
        "CancelTask returns the task in TASK_STATE_CANCELED",
        (canceled.id, state_name(canceled.status.state)),
    )
    got2 = await client.get_task(GetTaskRequest(id=task2.id))
    check(
        got2.status.state == TaskState.TASK_STATE_CANCELED,
        "GetTask confirms TASK_STATE_CANCELED",
        state_name(got2.status.state),
    )

    # 6. Typed errors.
    err: BaseException | None = None
    try:
        await client.cancel_task(CancelTaskRequest(id=task2.id))
    except A2AError as e:
        err = e
    on_grpc = h.binding == GRPC
    expect_error(
        err,
        TaskNotCancelableError,
        "CancelTask on a canceled task",
        grpc_code="FAILED_PRECONDITION" if on_grpc else None,
    )

    err = None
    unknown = f"ferry-no-such-task-{uuid.uuid4()}"
    try:
        await client.get_task(GetTaskRequest(id=unknown))
    except A2AError as e:
        err = e
    expect_error(err, TaskNotFoundError, "GetTask of an unknown id", grpc_code="NOT_FOUND" if on_grpc else None)


async def scenario_push(h: Harness) -> None:
    """Push-notification configs: one inline with a send, then create, get, list, delete."""
    assert h.card is not None
    check(h.card.capabilities.push_notifications, "agent card declares capabilities.pushNotifications")
    client = h.client(streaming=False)
    hook = "https://hooks.invalid/a2a"

    # 1. Inline, with the send that creates the task.
    inline = TaskPushNotificationConfig(url=hook, token="inline-token")
    request = SendMessageRequest(
        message=user_message(f"push-{uuid.uuid4()}", [new_text_part("notify me")]),
        configuration=SendMessageConfiguration(task_push_notification_config=inline),
    )
    events = [e async for e in client.send_message(request)]
    check(len(events) == 1 and events[0].HasField("task"), "SendMessage with an inline config returned a Task")
    tid = events[0].task.id
    listed = await client.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=tid))
    check(
        [(c.url, c.task_id) for c in listed.configs] == [(hook, tid)],
        "ListTaskPushNotificationConfigs shows the inline config",
        list(listed.configs),
    )
    check(not listed.configs[0].token, "the inline config's token is not shown back")

    # 2. Create with an id and credentials, get, list, delete twice.
    made = await client.create_task_push_notification_config(
        TaskPushNotificationConfig(
            task_id=tid,
            id="py-1",
            url=hook + "/second",
            token="secret-token",
            authentication=AuthenticationInfo(scheme="Bearer", credentials="secret-credentials"),
        )
    )
    check((made.id, made.task_id) == ("py-1", tid), "CreateTaskPushNotificationConfig keeps the id", made)
    got = await client.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id=tid, id="py-1"))
    check(
        (got.url, got.authentication.scheme) == (hook + "/second", "Bearer"),
        "GetTaskPushNotificationConfig returns the config",
        got,
    )
    check(
        not got.token and not got.authentication.credentials,
        "GetTaskPushNotificationConfig shows neither the token nor the credentials",
        got,
    )
    listed = await client.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=tid))
    check(len(listed.configs) == 2, "ListTaskPushNotificationConfigs lists both", len(listed.configs))
    for _ in range(2):
        await client.delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest(task_id=tid, id="py-1"))
    check(True, "DeleteTaskPushNotificationConfig twice succeeds")
    err: BaseException | None = None
    try:
        await client.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id=tid, id="py-1"))
    except A2AError as e:
        err = e
    expect_error(
        err,
        TaskNotFoundError,
        "GetTaskPushNotificationConfig of a deleted config",
        grpc_code="NOT_FOUND" if h.binding == GRPC else None,
    )


SCENARIO_FUNCS = {
    "echo": scenario_echo,
    "turns": scenario_turns,
    "tasks": scenario_tasks,
    "push": scenario_push,
}


async def run(args: argparse.Namespace) -> None:
    """Resolves the card, runs the scenario, then checks the observed requests."""
    h = Harness(args.base_url, args.binding, args.ca_file)
    try:
        await h.resolve_card()
        await SCENARIO_FUNCS[args.scenario](h)
        h.check_requests()
    finally:
        await h.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="Drive a ferry A2A server with the official a2a-sdk client.")
    parser.add_argument("--base-url", required=True, help="server root, e.g. http://127.0.0.1:8080")
    parser.add_argument("--binding", required=True, choices=BINDINGS, help="protocol binding to use")
    parser.add_argument("--scenario", required=True, choices=SCENARIOS)
    parser.add_argument("--timeout", type=float, default=20.0, help="overall limit in seconds (default 20)")
    parser.add_argument("--ca-file", help="trust this CA (PEM) for an https server")
    args = parser.parse_args()

    sdk = importlib.metadata.version("a2a-sdk")
    print(f"interop: scenario={args.scenario} binding={args.binding} base={args.base_url} a2a-sdk={sdk}", flush=True)
    try:
        asyncio.run(asyncio.wait_for(run(args), args.timeout))
    except CheckFailed as e:
        print(f"FAIL [{args.scenario}/{args.binding}]: {e}", flush=True)
        return 1
    except (asyncio.TimeoutError, TimeoutError):
        print(f"FAIL [{args.scenario}/{args.binding}]: scenario did not finish within {args.timeout:.0f}s", flush=True)
        return 3
    except Exception as e:  # noqa: BLE001 - report anything unexpected clearly
        traceback.print_exc()
        print(f"FAIL [{args.scenario}/{args.binding}]: unexpected {type(e).__name__}: {e}", flush=True)
        return 2
    print(f"PASS [{args.scenario}/{args.binding}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
