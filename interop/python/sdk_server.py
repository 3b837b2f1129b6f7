"""An A2A v1.0 server built with the official Python SDK (a2a-sdk 1.3.0), for ferry's CLI tests.

``crates/ferry/tests/interop_sdk_server.rs`` starts this script and drives it with the ``ferry``
CLI over both bindings. It is a test fixture, not a product.

Usage::

    python interop/python/sdk_server.py [--port N]

``--port 0`` (the default) picks a free port. Once listening, the script prints one line on
stdout, in the same form as ``ferry serve``::

    agent card: http://127.0.0.1:PORT/.well-known/agent-card.json

What it serves (all on 127.0.0.1):

* ``GET /.well-known/agent-card.json``: the card, with two interfaces, JSON-RPC first
  (``/a2a/jsonrpc``), then HTTP+JSON (``/a2a/rest``); streaming on, push notifications off.
* The SDK's ``DefaultRequestHandler`` with an in-memory task store behind both bindings.

Behaviour of the executor, chosen by the messageId of the user's message:

* ``ferry-turns-3…``: a three-turn conversation on one task. Turns 1 and 2 end in
  INPUT_REQUIRED, turn 3 in COMPLETED; every turn adds an artifact ``turn-N`` whose text says
  which turn it was.
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

import uvicorn
from starlette.applications import Starlette

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
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)

TURNS_PREFIX = "ferry-turns-3"
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


def agent_card(base: str) -> AgentCard:
    """The card: JSON-RPC first, then HTTP+JSON."""
    return AgentCard(
        name="a2a-sdk interop server",
        description="Echoes messages; messageId ferry-turns-3… plays a three-turn conversation.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=base + JSONRPC_PATH, protocol_binding="JSONRPC", protocol_version="1.0"
            ),
            AgentInterface(
                url=base + REST_PATH, protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    args = parser.parse_args()

    # Bind first, so the card can name the real port even with --port 0.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"

    card = agent_card(base)
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH),
        *create_rest_routes(handler, path_prefix=REST_PATH),
    ]
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))

    print(f"agent card: {base}/.well-known/agent-card.json", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
