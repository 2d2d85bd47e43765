"""How state crosses a delegation's boundary: one class per ``state=`` mode (SPEC §3).

Each mode says what the member runs on (``enter``), what it gets back before its run's end event
goes out (``leave``: a member's session saves on that event, and must never save the parent's
state), what comes up when the run ended well (``collect``), and how that reaches the parent's
state, on the parent's thread and in call order (``settle``):

- ``copy``: the member runs on a deep copy of the parent's state (taken from the snapshot of the
  batch, so sibling delegations see the same one), its own private keys layered under it; on
  return only the paths it changed under the parent's keys are applied, each attributed to the
  member's tool or hook that made it (``StateCause(kind="merge", via=...)``).
- ``live``: the member runs on the parent's state object; its writes happen as it makes them.
- ``none``: only ``inputs_from_state`` keys go down, only ``outputs_to_state`` keys come up,
  through the parent's handlers.

Keys the parent did not give stay in the member's private state and never go up.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

from ..events import StateCause
from ..messages import Message
from ..state.diff import make_patch
from ..state.frozen import thaw
from ..state.tracking import StateTracker
from ..tools.run_context import RunContext
from .merge import ChildRun, author, merge


class DelegationSite(Protocol):
    """What a mode reads of the delegate call it serves (``site.DelegationSite``)."""

    snapshot: Any
    """The parent's state when the batch of calls began."""
    ctx: RunContext
    """The parent run's context (its live state, its agent)."""
    delegation: Any
    """The delegation's configuration (``inputs_from_state`` / ``outputs_to_state``)."""


ANSWER_SOURCES = ("answer", "last_message")
"""``outputs_to_state`` sources meaning the member's final answer (Haystack says last_message)."""


@dataclass
class Entered:
    """A member's state as it was before one run, and what was put in its place."""

    own_state: Any
    """The member's own State object."""
    private: dict[str, Any] = field(default_factory=dict)
    """Its values before the run (``copy`` / ``none``)."""
    given: set[str] = field(default_factory=set)
    """The parent's keys put into it for the run."""
    kept_messages: list[Message] = field(default_factory=list)
    """``live``: the parent's messages before the run (the member's run writes its own there)."""


class StateMode:
    """One way state crosses the boundary; ``copy`` and ``none`` share the private layering."""

    name: ClassVar[str]
    live: ClassVar[bool] = False
    """Whether members run on the parent's own state (nothing to merge; never side by side)."""

    def enter(self, site: DelegationSite, member: Any) -> Entered:
        """Put in place what the member runs on."""
        own = member.state
        entered = Entered(own, private=thaw(own.frozen()))
        parent = thaw(site.snapshot)
        down = self.down(site, member, parent)
        entered.given = set(down)
        own.replace_data({**entered.private, **copy.deepcopy(down)})
        return entered

    def down(self, site: DelegationSite, member: Any, parent: dict[str, Any]) -> dict[str, Any]:
        """The parent's values the member is given."""
        raise NotImplementedError

    def leave(
        self,
        entered: Entered,
        run: ChildRun,
        assignment: Any,
        tracker: StateTracker | None,
        site: DelegationSite,
    ) -> None:
        """Give the member its own state back; ``tracker`` is None when the run never started."""
        own = entered.own_state
        if tracker is None:
            own.replace_data(entered.private)
        else:
            run.after = thaw(tracker.snapshot)
            passed = entered.given | set(assignment.state_values)  # values for this run only
            own.replace_data(
                {
                    **{k: v for k, v in run.after.items() if k not in passed},
                    **{k: entered.private[k] for k in passed if k in entered.private},
                }
            )
        own.frozen(consume=True)

    def resume(self, entered: Entered, paused: Any, assignment: Any) -> None:
        """A member run that paused for a person goes on: the parent's keys, and the values given
        for the run, as the member left them when it paused."""
        own = entered.own_state
        at_pause = thaw(paused.frozen_after)
        passed = entered.given | set(assignment.state_values)
        own.replace_data({**thaw(own.frozen()), **{k: at_pause[k] for k in passed if k in at_pause}})

    def collect(self, site: DelegationSite, run: ChildRun, entered: Entered) -> None:
        """Note what comes up from a run that ended well."""

    def settle(
        self,
        site: DelegationSite,
        run: ChildRun,
        state: Any,
        tracker: StateTracker,
        writers: dict[str, str],
        cause: StateCause,
    ) -> str | None:
        """Apply what came up to the parent's state; the text of a refusal, or None."""
        raise NotImplementedError


class Live(StateMode):
    """``live``: the member runs on the parent's state object."""

    name = "live"
    live = True

    def enter(self, site: DelegationSite, member: Any) -> Entered:
        entered = Entered(member.state, kept_messages=list(site.ctx.state.messages))
        member.state = site.ctx.state
        return entered

    def resume(self, entered: Entered, paused: Any, assignment: Any) -> None:
        """The member's writes before it paused are in the parent's state already."""

    def leave(
        self,
        entered: Entered,
        run: ChildRun,
        assignment: Any,
        tracker: StateTracker | None,
        site: DelegationSite,
    ) -> None:
        site.ctx.state.messages[:] = entered.kept_messages
        assignment.member.state = entered.own_state

    def settle(
        self,
        site: DelegationSite,
        run: ChildRun,
        state: Any,
        tracker: StateTracker,
        writers: dict[str, str],
        cause: StateCause,
    ) -> str | None:
        tracker.checkpoint(cause)  # the member's writes are there already: named as its merge
        return None


class Copy(StateMode):
    """``copy``: a deep copy of the parent's state down, the changed paths up."""

    name = "copy"

    def down(self, site: DelegationSite, member: Any, parent: dict[str, Any]) -> dict[str, Any]:
        schema = member.state.schema if member.state.has_schema else None
        return {k: v for k, v in parent.items() if schema is None or k in schema}

    def collect(self, site: DelegationSite, run: ChildRun, entered: Entered) -> None:
        record = run.done
        before = {k: v for k, v in record.state_start.items() if k in entered.given}
        after = {k: v for k, v in run.after.items() if k in entered.given}
        changes = record.state_changes
        for op in make_patch(before, after):
            run.ops.append((op, author(op["path"], changes, record.path)))

    def settle(
        self,
        site: DelegationSite,
        run: ChildRun,
        state: Any,
        tracker: StateTracker,
        writers: dict[str, str],
        cause: StateCause,
    ) -> str | None:
        return merge(run, site.ctx.agent, state, tracker, writers, cause)


class Mapped(StateMode):
    """``none``: only ``inputs_from_state`` keys down, only ``outputs_to_state`` keys up."""

    name = "none"

    def down(self, site: DelegationSite, member: Any, parent: dict[str, Any]) -> dict[str, Any]:
        inputs = site.delegation.inputs_from_state
        return {m: parent[p] for p, m in inputs.items() if p in parent}

    def collect(self, site: DelegationSite, run: ChildRun, entered: Entered) -> None:
        for key, spec in site.delegation.outputs_to_state.items():
            source = spec.get("source")
            if source is None or source in ANSWER_SOURCES:
                value = run.done.content
            elif source in run.after:
                value = run.after[source]
            else:
                continue
            run.outputs.append((key, value, spec.get("handler")))

    def settle(
        self,
        site: DelegationSite,
        run: ChildRun,
        state: Any,
        tracker: StateTracker,
        writers: dict[str, str],
        cause: StateCause,
    ) -> str | None:
        for key, value, handler in run.outputs:
            state.set(key, value, handler_override=handler)
            used = handler or (state.handler_for(key) if state.has_schema else None)
            tracker.checkpoint(
                replace(cause, via=(*run.done.path, f"output:{key}"), handler=getattr(used, "__name__", None))
            )
        return None


MODES: dict[str, StateMode] = {mode.name: mode for mode in (Copy(), Live(), Mapped())}
"""Each ``state=`` value's mode."""

__all__ = ["ANSWER_SOURCES", "MODES", "Copy", "Entered", "Live", "Mapped", "StateMode"]
