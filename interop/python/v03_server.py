"""An A2A v0.3 server built with the official Python SDK of v0.3 (a2a-sdk 0.3.26), for ferry's
client tests (``crates/ferry/tests/interop_v03.rs``). A test fixture, not a product.

Usage::

    python interop/python/v03_server.py [--port N]

``--port 0`` (the default) picks a free port. Once it listens, the script prints one line on
stdout, in the same form as ``ferry serve``::

    agent card: http://127.0.0.1:PORT/.well-known/agent-card.json

It serves the SDK's ``A2AStarletteApplication`` (JSON-RPC at ``/``, the v0.3 card with
``url``, ``preferredTransport: JSONRPC`` and no ``supportedInterfaces``) over the SDK's
``DefaultRequestHandler`` and an in-memory task store. The executor, by the text of the
user's message:

* ``ask …``: INPUT_REQUIRED with the question ``what else?``; the follow-up on the same task
  completes it with an artifact ``answer`` holding the follow-up's text;
* ``hold …``: WORKING with an artifact ``held``, then nothing until the task is canceled;
* anything else: the text comes back as artifact ``echo`` and the task completes.

One change to the SDK's handler: its ``tasks/resubscribe`` starts with the task as it is
(as v1.0's ``SubscribeToTask`` does, and only once the subscription is attached). The 0.3
SDK's own sends nothing until the task's next event, and a test must see that a
subscription is live before it cancels the task, without waiting blindly.
"""

from __future__ import annotations

import argparse
import asyncio
import socket

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventConsumer, EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, ResultAggregator, TaskManager, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Part,
    TaskNotFoundError,
    TaskState,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task
from a2a.utils.errors import ServerError


class Executor(AgentExecutor):
    """Echo, ask, hold (see the module docstring)."""

    def __init__(self) -> None:
        self.held: dict[str, asyncio.Event] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        asked = task.status.state == TaskState.input_required
        if asked:
            await updater.add_artifact([Part(root=TextPart(text=text))], name="answer")
            await updater.complete()
        elif text.startswith("ask"):
            await updater.requires_input(
                new_agent_text_message("what else?", task.context_id, task.id), final=True
            )
        elif text.startswith("hold"):
            await updater.start_work()
            await updater.add_artifact([Part(root=TextPart(text="held"))], name="held")
            released = self.held.setdefault(task.id, asyncio.Event())
            await released.wait()
        else:
            await updater.start_work()
            await updater.add_artifact([Part(root=TextPart(text=text))], name="echo")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.cancel()
        self.held.setdefault(task.id, asyncio.Event()).set()


class Handler(DefaultRequestHandler):
    """The SDK's handler; a resubscription starts with the task (see the module docstring)."""

    async def on_resubscribe_to_task(self, params, context=None):
        task = await self.task_store.get(params.id, context)
        if not task:
            raise ServerError(error=TaskNotFoundError())
        queue = await self._queue_manager.tap(task.id)
        if not queue:
            raise ServerError(error=TaskNotFoundError())
        yield task
        manager = TaskManager(
            task_id=task.id,
            context_id=task.context_id,
            task_store=self.task_store,
            initial_message=None,
            context=context,
        )
        async for event in ResultAggregator(manager).consume_and_emit(EventConsumer(queue)):
            yield event


def agent_card(base: str) -> AgentCard:
    return AgentCard(
        name="a2a-sdk 0.3 interop server",
        description="Echoes, asks, holds.",
        url=base + "/",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True),
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])],
    )


async def serve(sock: socket.socket) -> None:
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    card = agent_card(base)
    handler = Handler(agent_executor=Executor(), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"agent card: {base}/.well-known/agent-card.json", flush=True)
    await server.serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    asyncio.run(serve(sock))


if __name__ == "__main__":
    main()
