"""An A2A v1.0 server built with the official Python SDK (a2a-sdk 1.3.0), for ferry's CLI tests.

``crates/ferry/tests/call_cli.rs`` starts this script and drives it with the ``ferry`` CLI
over each binding. It is a test fixture, not a product.

Usage::

    python interop/python/sdk_server.py [--port N] [--grpc-port N] [--push]

``--port 0`` (the default) picks a free port. ``--grpc-port N`` also serves the SDK's gRPC
server (``GrpcHandler`` on ``grpc.aio.server``, plaintext HTTP/2) on a second port, ``0`` for
a free one; without it there is no gRPC. Once everything listens, the script prints one line
on stdout, in the same form as ``ferry serve``::

    agent card: http://127.0.0.1:PORT/.well-known/agent-card.json

What it serves (all on 127.0.0.1):

* ``GET /.well-known/agent-card.json``: the card, JSON-RPC first (``/a2a/jsonrpc``), then
  HTTP+JSON (``/a2a/rest``), then, with ``--grpc-port``, GRPC (``127.0.0.1:GRPCPORT``: a gRPC
  interface URL is ``host:port``); streaming on, push notifications off (``--push``: on, with
  the SDK's in-memory config store and its sender, which posts every event of a task to its
  configs' webhooks).
* The SDK's ``DefaultRequestHandler`` with an in-memory task store behind every binding (one
  handler, so a task made over one binding is seen over the others).
* With ``--grpc-port``, ``GET /_test/grpc-calls``: every gRPC call received so far, in order,
  as ``[{"method": "/lf.a2a.v1.A2AService/SendMessage", "a2aVersion": "1.0"}, …]`` (the
  ``a2a-version`` metadata, ``null`` when absent). A server interceptor records each call
  before it is handled, so a client that got its answer finds its call listed: the test
  proves which binding ferry used without waiting on the server's output.

Behaviour of the executor, chosen by the messageId of the user's message:

* ``ferry-turns-3…``: a three-turn conversation on one task. Turns 1 and 2 end in
  INPUT_REQUIRED, turn 3 in COMPLETED; every turn adds an artifact ``turn-N`` whose text says
  which turn it was.
* ``ferry-refuse…``: the executor raises the SDK's ``InvalidParamsError`` before any event,
  so the request is answered with that A2A error (a proxy must pass it on unchanged).
* anything else: echo. The received parts come back as artifact ``echo`` and the task completes.

Two SDK 1.x rules the executor follows: the ``Task`` is enqueued before any status or artifact
update, and follow-ups use the stored task's own ``context_id`` (the SDK hands the executor a
fresh one when the client sends only a taskId).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys

import httpx
import uvicorn
from starlette.applications import Starlette

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.helpers.proto_helpers import new_task, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.utils.errors import InvalidParamsError
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)

TURNS_PREFIX = "ferry-turns-3"
REFUSE_PREFIX = "ferry-refuse"
REFUSAL = "ferry-refuse: this agent refuses the message (a test of error passing)"
GRPC_CALLS_PATH = "/_test/grpc-calls"
TURNS = 3
JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"


class InteropExecutor(AgentExecutor):
    """Echo, or the ``ferry-turns-3`` conversation (see the module docstring)."""

    def __init__(self) -> None:
        # Completed turns per task id (this fixture keeps everything in memory).
        self._turns: dict[str, int] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None, "SendMessage always carries a message"
        if message.message_id.startswith(REFUSE_PREFIX):
            raise InvalidParamsError(message=REFUSAL)
        task = context.current_task
        if task is None:
            task = new_task(
                context.task_id,
                context.context_id,
                TaskState.TASK_STATE_SUBMITTED,
                history=[message],
            )
            await event_queue.enqueue_event(task)
        # The stored task's ids, never the context's (fresh on taskId-only follow-ups).
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if message.message_id.startswith(TURNS_PREFIX):
            await self._turn(message, task.id, updater)
        else:
            await updater.add_artifact(list(message.parts), artifact_id="echo", name="echo")
            await updater.complete()

    async def _turn(self, message, task_id: str, updater: TaskUpdater) -> None:
        turn = self._turns.get(task_id, 0) + 1
        self._turns[task_id] = turn
        got = "".join(p.text for p in message.parts if p.HasField("text"))
        name = f"turn-{turn}"
        await updater.add_artifact(
            [new_text_part(f"turn {turn} of {TURNS}: got {got!r}")],
            artifact_id=name,
            name=name,
            last_chunk=True,
        )
        if turn < TURNS:
            await updater.requires_input(
                self._agent_text(updater, f"turn {turn} of {TURNS} done; send the next message")
            )
        else:
            await updater.complete(self._agent_text(updater, f"all {TURNS} turns done"))

    @staticmethod
    def _agent_text(updater: TaskUpdater, text: str):
        """An agent message (the helper's default role) on the updater's task."""
        return new_text_message(text, context_id=updater.context_id, task_id=updater.task_id)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        task_id = task.id if task else context.task_id
        context_id = task.context_id if task else context.context_id
        await TaskUpdater(event_queue, task_id, context_id).cancel()


def agent_card(base: str, grpc_target: str | None, push: bool = False) -> AgentCard:
    """The card: JSON-RPC first, then HTTP+JSON, then GRPC when `grpc_target` is given."""
    interfaces = [
        AgentInterface(url=base + JSONRPC_PATH, protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=base + REST_PATH, protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    if grpc_target is not None:
        interfaces.append(
            AgentInterface(url=grpc_target, protocol_binding="GRPC", protocol_version="1.0")
        )
    return AgentCard(
        name="a2a-sdk interop server",
        description="Echoes messages; messageId ferry-turns-3… plays a three-turn conversation.",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="echo",
                name="echo",
                description="Echoes the message's parts as an artifact.",
                tags=["test"],
            )
        ],
    )


def recording_grpc_server(calls: list[dict[str, str | None]]):  # -> grpc.aio.Server
    """A grpc.aio server whose interceptor appends every call to `calls` before handling it.

    grpc is imported here, not at the top: without --grpc-port the fixture needs no grpc extra.
    Call this inside the running event loop (a grpc.aio server belongs to it).
    """
    import grpc.aio  # noqa: PLC0415

    class Recorder(grpc.aio.ServerInterceptor):
        async def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
            version = None
            for key, value in handler_call_details.invocation_metadata or ():
                if key == "a2a-version":
                    version = value
            calls.append({"method": handler_call_details.method, "a2aVersion": version})
            return await continuation(handler_call_details)

    return grpc.aio.server(interceptors=[Recorder()])


async def serve(sock: socket.socket, grpc_port: int | None, push: bool = False) -> None:
    """Starts the gRPC server (if asked for), prints the card line, serves HTTP until killed."""
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    grpc_server = None
    grpc_target = None
    grpc_calls: list[dict[str, str | None]] = []
    if grpc_port is not None:
        grpc_server = recording_grpc_server(grpc_calls)
        # add_insecure_port binds now and returns the real port (0: a free one).
        bound = grpc_server.add_insecure_port(f"127.0.0.1:{grpc_port}")
        if bound == 0:
            raise SystemExit(f"cannot bind gRPC on 127.0.0.1:{grpc_port}")
        grpc_target = f"127.0.0.1:{bound}"

    card = agent_card(base, grpc_target, push)
    push_parts = {}
    if push:
        # The SDK's own push support: configs in memory, its sender posting each event.
        from a2a.server.tasks import (  # noqa: PLC0415
            BasePushNotificationSender,
            InMemoryPushNotificationConfigStore,
        )

        configs = InMemoryPushNotificationConfigStore()
        sender = BasePushNotificationSender(httpx.AsyncClient(timeout=10), configs)
        push_parts = {"push_config_store": configs, "push_sender": sender}
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        **push_parts,
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH),
        *create_rest_routes(handler, path_prefix=REST_PATH),
    ]
    if grpc_server is not None:
        from a2a.server.request_handlers import GrpcHandler  # noqa: PLC0415
        from a2a.types import a2a_pb2_grpc  # noqa: PLC0415

        async def list_grpc_calls(_: Request) -> JSONResponse:
            return JSONResponse(grpc_calls)

        # First: the REST routes end in a `/{tenant}` mount that would take this path.
        routes.insert(0, Route(GRPC_CALLS_PATH, list_grpc_calls, methods=["GET"]))
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
        await grpc_server.start()
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))

    # Both sockets listen by now (HTTP's since main(), gRPC's since start()).
    print(f"agent card: {base}/.well-known/agent-card.json", flush=True)
    try:
        await server.serve(sockets=[sock])
    finally:
        if grpc_server is not None:
            await grpc_server.stop(None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument(
        "--grpc-port",
        type=int,
        default=None,
        help="also serve gRPC on this port of 127.0.0.1 (0: any free one); default: no gRPC",
    )
    parser.add_argument(
        "--push",
        action="store_true",
        help="declare and send push notifications (the SDK's in-memory config store and sender)",
    )
    args = parser.parse_args()

    # Bind first, so the card can name the real port even with --port 0.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)

    asyncio.run(serve(sock, args.grpc_port, args.push))
    return 0


if __name__ == "__main__":
    sys.exit(main())
