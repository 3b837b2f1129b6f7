"""Helpers shared by the interop scripts: assertions, and reading A2A event streams.

Imported by interop_client.py and forms_conversation.py (run as scripts, so this directory
is on sys.path).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from a2a.helpers import get_text_parts
from a2a.types.a2a_pb2 import StreamResponse, TaskState


class CheckFailed(Exception):
    """An interop assertion failed."""


def check(condition: bool, what: str, detail: Any = None) -> None:
    """Raises CheckFailed with `what` (and what was seen) unless `condition` holds."""
    if not condition:
        raise CheckFailed(what if detail is None else f"{what}\n      got: {detail}")
    print(f"  ok: {what}", flush=True)


def state_name(state: int) -> str:
    """TaskState enum value -> its proto name, e.g. TASK_STATE_COMPLETED."""
    try:
        return TaskState.Name(state)
    except ValueError:
        return f"<unknown TaskState {state}>"


def describe(event: StreamResponse) -> str:
    """One-line summary of a stream event for logs and failure messages."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        return f"task(id={event.task.id}, state={state_name(event.task.status.state)})"
    if kind == "status_update":
        su = event.status_update
        text = get_text_parts(su.status.message.parts) if su.status.HasField("message") else []
        return f"statusUpdate(taskId={su.task_id}, state={state_name(su.status.state)}, text={text!r})"
    if kind == "artifact_update":
        au = event.artifact_update
        texts = get_text_parts(au.artifact.parts)
        return f"artifactUpdate(taskId={au.task_id}, artifactId={au.artifact.artifact_id}, text={texts!r})"
    if kind == "message":
        return f"message(id={event.message.message_id}, text={get_text_parts(event.message.parts)!r})"
    return f"<empty StreamResponse {event}>"


def event_task_id(event: StreamResponse) -> str:
    """The task id an event belongs to ('' for a Message)."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        return event.task.id
    if kind == "status_update":
        return event.status_update.task_id
    if kind == "artifact_update":
        return event.artifact_update.task_id
    return ""


def event_context_id(event: StreamResponse) -> str:
    """The context id an event belongs to ('' for a Message)."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        return event.task.context_id
    if kind == "status_update":
        return event.status_update.context_id
    if kind == "artifact_update":
        return event.artifact_update.context_id
    return ""


async def collect(
    stream: AsyncIterator[StreamResponse], label: str, step_timeout: float
) -> list[StreamResponse]:
    """Reads a stream to its end; each event must arrive within `step_timeout` seconds."""
    events: list[StreamResponse] = []
    it = stream.__aiter__()
    while True:
        try:
            event = await asyncio.wait_for(it.__anext__(), step_timeout)
        except StopAsyncIteration:
            return events
        except asyncio.TimeoutError:
            raise CheckFailed(
                f"{label}: no event and no end of stream within {step_timeout:.0f}s; "
                f"events so far: {[describe(e) for e in events]}"
            ) from None
        print(f"    event: {describe(event)}", flush=True)
        events.append(event)
