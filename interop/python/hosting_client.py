#!/usr/bin/env python3
"""Hosting client: drive each agent of a ferry server of several with the official Python SDK.

For every ``--agent BASE=EXPECTED`` (``BASE`` is the agent's root, e.g.
``http://127.0.0.1:PORT/agents/echo``), the SDK resolves the agent's card under ``BASE``,
sends one blocking message over ``--binding`` and checks that the task COMPLETED with an
artifact whose text contains ``EXPECTED``, and that every call went to that agent's own
interface. Then the first agent's task id is asked of every other agent, which must answer
TaskNotFoundError: each agent has its own task namespace.

Exit codes as ``interop_client.py``: 0 pass, 1 a check failed, 2 an unexpected exception,
3 the timeout.

Usage::

    hosting_client.py --binding JSONRPC --agent http://127.0.0.1:PORT/agents/echo="hello" \
        --agent http://127.0.0.1:PORT/agents/shout="HELLO"
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import traceback
import uuid

from a2a.helpers import get_text_parts, new_text_part
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState
from a2a.utils.errors import TaskNotFoundError
from interop_client import BINDINGS, Harness, send_blocking, user_message
from stream_events import CheckFailed, check, state_name

TEXT = "hello ferry"


async def run(args: argparse.Namespace) -> None:
    """Talks to each agent, then checks that the first agent's task is unknown elsewhere."""
    agents = []
    for spec in args.agent:
        base, sep, expected = spec.partition("=")
        check(bool(sep) and bool(expected), f"--agent {spec!r} is BASE=EXPECTED")
        agents.append((base, expected))
    harnesses: list[Harness] = []
    try:
        clients = []
        first_task = ""
        for base, expected in agents:
            print(f"agent {base}:", flush=True)
            h = Harness(base, args.binding)
            harnesses.append(h)
            await h.resolve_card()
            client = h.client(streaming=False)
            msg = user_message(f"ferry-hosting-{uuid.uuid4()}", [new_text_part(TEXT)])
            task = await send_blocking(client, msg)
            check(
                task.status.state == TaskState.TASK_STATE_COMPLETED,
                f"{base}: the task is TASK_STATE_COMPLETED",
                state_name(task.status.state),
            )
            # Chunks are appended to one artifact as parts: read each artifact's text whole.
            texts = ["".join(get_text_parts(a.parts)) for a in task.artifacts]
            check(
                any(expected in t for t in texts),
                f"{base}: an artifact says {expected!r}",
                texts,
            )
            first_task = first_task or task.id
            clients.append((h, client))
        for h, client in clients[1:]:
            raised = None
            try:
                await client.get_task(GetTaskRequest(id=first_task))
            except TaskNotFoundError as e:
                raised = e
            check(
                raised is not None,
                f"{h.base_url}: the first agent's task {first_task} is TaskNotFoundError here",
            )
        for h in harnesses:
            h.check_requests()
    finally:
        for h in harnesses:
            await h.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binding", required=True, choices=BINDINGS)
    parser.add_argument("--agent", action="append", required=True, help="BASE=EXPECTED (repeatable)")
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()
    try:
        asyncio.run(asyncio.wait_for(run(args), args.timeout))
    except CheckFailed as e:
        print(f"FAIL [hosting/{args.binding}]: {e}", flush=True)
        return 1
    except (asyncio.TimeoutError, TimeoutError):
        print(f"FAIL [hosting/{args.binding}]: did not finish within {args.timeout:.0f}s", flush=True)
        return 3
    except Exception as e:  # noqa: BLE001 - report anything unexpected clearly
        traceback.print_exc()
        print(f"FAIL [hosting/{args.binding}]: unexpected {type(e).__name__}: {e}", flush=True)
        return 2
    print(f"PASS [hosting/{args.binding}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
