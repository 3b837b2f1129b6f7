#!/usr/bin/env python3
"""Google ADK interop: ADK's ``RemoteA2aAgent`` calls a ferry server.

ADK (``google-adk``, see ``requirements-adk.txt``; its own venv) wraps a remote
A2A agent as one of its agents: it fetches the card from the URL it is given,
checks every interface URL on it (each must be ``https``, or ``http`` on a
loopback host, on the card's own origin), picks a binding and sends each turn of
an ADK session as an A2A message. No model is involved: the runner's only agent
is the remote one. The server runs ``ferry serve --agent conformance``, whose
behaviours are chosen by the first message's text (``tck-…``).

Modes:

* ``--expect refused --refused-url URL``: ADK refuses the card, naming the
  interface URL it refused (ferry's default card lists gRPC at ``host:port``, as
  the spec says). ADK reports this as an error event of the turn.
* ``--expect works`` (the default): over ``--transport`` (JSONRPC or HTTP+JSON),
  with ``--streaming`` or without:

  - a turn whose answer completes the task (``tck-complete-task``): ADK's event
    carries the agent's text ("tck-complete-task ok");
  - two turns of one task (``tck-multi-turn``): the first ends in
    input-required, which ADK hands on as a call of its input function with the
    agent's question ("more input please"); the second continues the same task
    (same task id; ferry picks the behaviour from the task's first message, so a
    new task would be echoed instead) and completes it ("multi-turn complete")
    without ADK asking the first turn's question again;
  - with ``--streaming``, a streamed turn (``tck-stream-basic``) whose artifact
    ("streamed content") reaches ADK.

One ``ok:`` line per check; exit 0 on success, 1 on a failed check, 2 on an
unexpected exception, 3 on the ``--timeout``.

Usage::

    adk_client.py --card-url http://127.0.0.1:PORT/.well-known/agent-card.json \\
        [--transport JSONRPC|HTTP+JSON] [--streaming]
        [--expect works | --expect refused --refused-url HOST:PORT]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import sys
import traceback
import warnings

import httpx
from a2a.client import ClientConfig, ClientFactory
from google.adk.agents.remote_a2a_agent import AgentCardResolutionError, RemoteA2aAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

# ADK marks its A2A support experimental on every use; that is no news to this script.
warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]")

APP = "ferry-interop"
USER = "interop-user"


class CheckFailed(Exception):
    pass


class AdkError(Exception):
    """An error ADK reported as an event (how it reports a card it refuses)."""


def check(condition: bool, what: str) -> None:
    if not condition:
        raise CheckFailed(what)
    print(f"ok: {what}", flush=True)


class Turn:
    """What one turn brought back: texts, questions the agent asked, the A2A task ids."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.asked: list[str] = []
        self.task_ids: set[str] = set()

    def __repr__(self) -> str:
        return f"texts={self.texts} asked={self.asked} tasks={sorted(self.task_ids)}"


class Session:
    """One ADK session whose only agent is the remote ferry agent."""

    def __init__(self, agent: RemoteA2aAgent) -> None:
        self.service = InMemorySessionService()
        self.runner = Runner(app_name=APP, agent=agent, session_service=self.service)
        self.id: str | None = None

    async def turn(self, text: str) -> Turn:
        """Sends `text` as the user's turn; what the agent answered, as ADK's events say."""
        if self.id is None:
            session = await self.service.create_session(app_name=APP, user_id=USER)
            self.id = session.id
        message = types.Content(role="user", parts=[types.Part(text=text)])
        turn = Turn()
        async for event in self.runner.run_async(
            user_id=USER, session_id=self.id, new_message=message
        ):
            if event.error_message:
                raise AdkError(event.error_message)
            task_id = (event.custom_metadata or {}).get("a2a:task_id")
            if task_id:
                turn.task_ids.add(task_id)
            for part in (event.content.parts if event.content else None) or []:
                if part.text:
                    turn.texts.append(part.text)
                # ADK hands an A2A task that asks for input to its caller as a call of
                # its own function, with the agent's question as the argument.
                call = part.function_call
                if call and call.args and "input_required" in call.args:
                    turn.asked.append(str(call.args["input_required"]))
        return turn


def remote_agent(card_url: str, transport: str, streaming: bool) -> RemoteA2aAgent:
    config = ClientConfig(
        streaming=streaming,
        supported_protocol_bindings=[transport],
        httpx_client=httpx.AsyncClient(timeout=30),
    )
    return RemoteA2aAgent(
        name="ferry",
        agent_card=card_url,
        a2a_client_factory=ClientFactory(config=config),
    )


async def expect_refused(card_url: str, refused_url: str) -> None:
    session = Session(remote_agent(card_url, "JSONRPC", streaming=False))
    try:
        turn = await session.turn("tck-complete-task")
    except (AdkError, AgentCardResolutionError) as e:
        print(f"refused: {e}", flush=True)
        check(
            f"Agent card RPC URL must use https, or http on a loopback host: {refused_url}"
            in str(e),
            f"ADK refuses the card for its interface {refused_url}",
        )
        return
    raise CheckFailed(f"ADK accepted the card and answered {turn}")


async def expect_works(card_url: str, transport: str, streaming: bool) -> None:
    how = f"{transport}, {'streaming' if streaming else 'blocking'}"
    done = await Session(remote_agent(card_url, transport, streaming)).turn("tck-complete-task")
    check(
        "tck-complete-task ok" in done.texts and len(done.task_ids) == 1,
        f"a completed task's answer reaches ADK ({how}): {done}",
    )

    conversation = Session(remote_agent(card_url, transport, streaming))
    first = await conversation.turn("tck-multi-turn start")
    check(
        first.asked == ["more input please"] and len(first.task_ids) == 1,
        f"the first of two turns asks for input ({how}): {first}",
    )
    second = await conversation.turn("done")
    check(
        "multi-turn complete" in second.texts and second.task_ids == first.task_ids,
        f"the second turn continues the same task and completes it ({how}): {second}",
    )
    check(
        not second.asked,
        f"the second turn does not ask the first turn's question again ({how}): {second}",
    )

    if streaming:
        streamed = await Session(remote_agent(card_url, transport, streaming)).turn(
            "tck-stream-basic"
        )
        check(
            "streamed content" in streamed.texts,
            f"a streamed artifact reaches ADK ({how}): {streamed}",
        )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--card-url", required=True)
    parser.add_argument("--transport", default="JSONRPC", choices=["JSONRPC", "HTTP+JSON"])
    parser.add_argument("--streaming", action="store_true")
    parser.add_argument("--expect", default="works", choices=["works", "refused"])
    parser.add_argument("--refused-url", help="with --expect refused: the URL ADK names")
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    print(
        f"google-adk {importlib.metadata.version('google-adk')},"
        f" a2a-sdk {importlib.metadata.version('a2a-sdk')}",
        flush=True,
    )
    if args.expect == "refused":
        run = expect_refused(args.card_url, args.refused_url or "")
    else:
        run = expect_works(args.card_url, args.transport, args.streaming)
    try:
        await asyncio.wait_for(run, args.timeout)
    except CheckFailed as e:
        print(f"FAILED: {e}", flush=True)
        return 1
    except asyncio.TimeoutError:
        print(f"FAILED: no answer within {args.timeout} s", flush=True)
        return 3
    except AdkError as e:
        print(f"FAILED: ADK reported an error: {e}", flush=True)
        return 1
    except Exception:
        traceback.print_exc()
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
