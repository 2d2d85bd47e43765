"""The items a paused run waits for, as a person decides them: ``item.approve()``,
``item.approve(arguments={...})``, ``item.reject("why")``, ``item.answer(value)``,
``item.edit(request={...})``. A decision is taken once and kept on the paused turn's record
(``Pause.decisions``); ``agent.continue_run()`` carries the run on with them."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ..errors import DecisionError, ToolArgumentsError
from ..events import Decision, PendingCall
from ..history.pause import Pause
from ..history.records import TurnRecord
from ..messages import ROLES, Message
from ..tools.checks import check_with_schema, schema_validator
from ..util.text import shorten

REQUEST_KEYS = ("messages", "tools", "options")
"""What an edited model request may replace."""


class PendingItem:
    """One thing a paused run waits for, and the person's decision about it. Its fields are the
    ``PendingCall``'s: ``id``, ``kind`` (approval, question, external, breakpoint), ``tool``,
    ``arguments``, ``reason``, ``path`` (the member's, in a team), ``request`` (a breakpoint
    before a model call)."""

    def __init__(self, call: PendingCall, pause: Pause) -> None:
        self.call = call
        """What waits (as the ``RunPaused`` event named it)."""
        self._pause = pause

    @property
    def id(self) -> str:
        """Its short id (``%agentnb approve NAME ID``)."""
        return self.call.id

    @property
    def kind(self) -> str:
        """approval, question, external or breakpoint."""
        return self.call.kind

    @property
    def tool(self) -> str | None:
        """The tool called (None for a breakpoint before a model call)."""
        return self.call.tool

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments as the model sent them."""
        return self.call.arguments

    @property
    def reason(self) -> str:
        """Why the run stopped here (for a question: the question)."""
        return self.call.reason

    @property
    def path(self) -> tuple[str, ...]:
        """Agent names from the top-level run down to the run that waits (a member's, in a team)."""
        return self.call.path

    @property
    def request(self) -> dict[str, Any] | None:
        """A breakpoint before a model call: the request about to go (messages, tools, options)."""
        return self.call.request

    @property
    def decision(self) -> Decision | None:
        """The decision taken about it, if any."""
        return self._pause.decisions.get(self.call.id)

    @property
    def decided(self) -> bool:
        """Whether a decision was taken."""
        return self.decision is not None

    # -- deciding ----------------------------------------------------------------------------

    def approve(self, arguments: Mapping[str, Any] | None = None) -> PendingItem:
        """Let the call run as the model asked, or (``arguments``) with these arguments instead,
        checked against the tool's schema; the edit is recorded as the person's."""
        kind = self.call.kind
        if kind in ("question", "external"):
            raise DecisionError(
                f"{self._name()} is answered, not approved: its result comes from you — item.answer(value)"
            )
        if self.call.tool is None:
            if arguments is not None:
                raise DecisionError(
                    f"{self._name()} is a model call: change what goes out with item.edit(request={{...}})"
                )
            return self._decide(Decision(id=self.call.id, verdict="approved", at=time.time()))
        if arguments is None:
            return self._decide(Decision(id=self.call.id, verdict="approved", at=time.time()))
        checked = self.check_arguments(arguments)
        return self._decide(Decision(id=self.call.id, verdict="edited", arguments=checked, at=time.time()))

    def reject(self, reason: str) -> PendingItem:
        """Do not run the call; the model reads ``reason`` as its result and goes on."""
        if self.call.tool is None:
            raise DecisionError(
                f"{self._name()} is a model call and cannot be rejected: approve() it as it is, or "
                "edit(request={...}) what goes out"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise DecisionError(
                f"reject {self._name()} with a reason: the model reads it (item.reject('why'))"
            )
        return self._decide(Decision(id=self.call.id, verdict="rejected", reason=reason, at=time.time()))

    def answer(self, value: Any) -> PendingItem:
        """The answer to the model's question, or the result of an external call (JSON data; a
        str is sent as it is)."""
        if self.call.kind not in ("question", "external"):
            raise DecisionError(
                f"{self._name()} waits for approval, not an answer: approve(), approve(arguments={{...}}) "
                "or reject('why')"
            )
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise DecisionError(
                f"the answer to {self._name()} must be JSON data (text, numbers, lists, dicts); "
                f"got {type(value).__name__}"
            ) from None
        return self._decide(Decision(id=self.call.id, verdict="answered", value=value, at=time.time()))

    def edit(
        self, request: Mapping[str, Any] | None = None, *, arguments: Mapping[str, Any] | None = None
    ) -> PendingItem:
        """A breakpoint before a model call: send ``request`` instead (its ``messages``, ``tools``
        and ``options``, each replacing what was about to go; the messages carry on as the run's
        conversation). A tool call: ``edit(arguments=...)`` is ``approve(arguments=...)``."""
        if self.call.tool is not None:
            if request is not None or arguments is None:
                raise DecisionError(f"{self._name()} is a tool call: edit(arguments={{...}}) or approve(...)")
            return self.approve(arguments)
        if request is None or arguments is not None:
            raise DecisionError(f"{self._name()} is a model call: edit(request={{'messages': [...], ...}})")
        edited = _checked_request(request, self._name())
        return self._decide(Decision(id=self.call.id, verdict="edited", request=edited, at=time.time()))

    # -- helpers -----------------------------------------------------------------------------

    def _decide(self, decision: Decision) -> PendingItem:
        taken = self.decision
        if taken is not None:
            raise DecisionError(
                f"{self._name()} was already {taken.verdict}; a decision is taken once. Continue the run "
                "with agent.continue_run()"
            )
        self._pause.decisions[self.call.id] = decision
        return self

    def check_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` as the call would run with them (a plain dict), checked against the
        tool's schema without deciding anything; DecisionError says what does not fit."""
        if not isinstance(arguments, Mapping):
            raise DecisionError(
                f"the arguments for {self._name()} must be a dict; got {type(arguments).__name__}"
            )
        plain = dict(arguments)
        try:
            json.dumps(plain)
            if self.call.parameters is not None:
                check_with_schema(schema_validator(self.call.parameters), plain)
        except ToolArgumentsError as exc:
            raise DecisionError(
                f"the arguments for {self._name()} do not fit the tool's schema: {exc}; give arguments that do"
            ) from None
        except (TypeError, ValueError):
            raise DecisionError(f"the arguments for {self._name()} must be JSON data") from None
        return plain

    def _name(self) -> str:
        what = f"{self.call.tool}" if self.call.tool is not None else f"model call {self.call.call + 1}"
        where = f" of {'/'.join(self.call.path)}" if len(self.call.path) > 1 else ""
        return f"pending item {self.call.id} ({self.call.kind}: {what}{where})"

    def __repr__(self) -> str:
        call = self.call
        what = (
            f"{call.tool}({shorten(json.dumps(call.arguments, ensure_ascii=False), 80)})"
            if call.tool is not None
            else f"model call {call.call + 1}"
        )
        decided = self.decision
        state = f" → {decided.verdict}" if decided is not None else ""
        where = f" [{'/'.join(call.path)}]" if len(call.path) > 1 else ""
        return f"<{call.kind} {call.id}: {what}{where} — {call.reason}{state}>"


def _checked_request(request: Mapping[str, Any], name: str) -> dict[str, Any]:
    if not isinstance(request, Mapping) or not request or set(request) - set(REQUEST_KEYS):
        keys = ", ".join(REQUEST_KEYS)
        raise DecisionError(
            f"the request for {name} is a dict with some of {keys}; got {shorten(repr(request), 120)}"
        )
    edited = dict(request)
    messages = edited.get("messages")
    if "messages" in edited:
        if not isinstance(messages, list) or not messages:
            raise DecisionError(
                f"the request's messages for {name} must be a non-empty list of chat messages"
            )
        for message in messages:
            if not isinstance(message, Mapping) or message.get("role") not in ROLES:
                raise DecisionError(
                    f"each message of the request for {name} is a dict with a role ({', '.join(ROLES)}); "
                    f"got {shorten(repr(message), 120)}"
                )
            try:
                Message.from_openai(dict(message))
            except (KeyError, TypeError, ValueError) as exc:
                raise DecisionError(f"a message of the request for {name} does not read: {exc!r}") from None
        edited["messages"] = [dict(m) for m in messages]
    if "tools" in edited and not (
        isinstance(edited["tools"], list) and all(isinstance(t, Mapping) for t in edited["tools"])
    ):
        raise DecisionError(f"the request's tools for {name} must be a list of tool schemas (dicts)")
    if "options" in edited and not isinstance(edited["options"], Mapping):
        raise DecisionError(f"the request's options for {name} must be a dict")
    try:
        json.dumps(edited)
    except (TypeError, ValueError):
        raise DecisionError(f"the request for {name} must be JSON data") from None
    return edited


def pending_items(record: TurnRecord) -> list[PendingItem]:
    """What a paused turn waits for: its own items, then those of the runs it delegated to that
    wait too (each with its member's path); [] for a turn that is not paused."""
    pause = record.pause
    if record.status != "paused" or pause is None:
        return []
    items = [PendingItem(call, pause) for call in pause.items]
    for child in record.children:
        items.extend(pending_items(child))
    return items


def pending_calls(record: TurnRecord) -> tuple[PendingCall, ...]:
    """The ``PendingCall`` of each item of ``pending_items`` (what a ``RunPaused`` names)."""
    return tuple(item.call for item in pending_items(record))


__all__ = ["REQUEST_KEYS", "PendingItem", "pending_calls", "pending_items"]
