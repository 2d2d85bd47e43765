"""A turn's output in a cell: live text while it runs, then the static record.

The record's text and HTML come from ``agentnb.history.render`` (deterministic and escaped); this module
only wires them to IPython's display system. While a turn runs, one display area shows the
streamed text, tool calls and typed output so far; when it ends, that area is emptied again and
the record is shown as an output of its own. The live area starts and ends empty on purpose: tools that compare
outputs without applying display updates (nbval) then see exactly what a front end saved.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

from IPython.display import DisplayHandle, display

from ..events import (
    Event,
    ModelRequested,
    OutputDelta,
    RunStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from ..history.attachments import part_line, static_figures
from ..history.render import PAUSED_NOTE, pending_lines, turn_html, turn_text
from .history_row import routed_run
from .images import asked_parts, static_images

if TYPE_CHECKING:
    from ..history.history import TurnRecord

LIVE_CSS_CLASS = "agentnb-live"
"""The class of the live (streaming) view's ``<pre>``."""


class TurnView:
    """A finished turn as text/plain + text/html (without its error line when the cell shows the
    error itself)."""

    def __init__(self, turn: TurnRecord, show_error: bool = True) -> None:
        self.turn = turn
        self.show_error = show_error

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {
            "text/plain": turn_text(self.turn, self.show_error),
            "text/html": turn_html(self.turn, self.show_error),
        }

    def __repr__(self) -> str:
        return turn_text(self.turn, self.show_error)


class _LiveText:
    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if not self.text:
            return {"text/plain": ""}
        escaped = html.escape(self.text, quote=True)
        return {
            "text/plain": self.text,
            "text/html": f'<pre class="{LIVE_CSS_CLASS}" style="white-space:pre-wrap">{escaped}</pre>',
        }


class LiveTurn:
    """An event subscriber that streams a running turn into one display area.

    Call it with every event of the run, then ``finish(turn)`` to leave the record in its place.
    """

    def __init__(self) -> None:
        self.handle: DisplayHandle | None = None
        self.pieces: list[str] = []
        self.partial = ""
        """The typed output so far, as a line below the text (``OutputDelta``)."""

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.pieces = [f"{event.agent} · turn {event.turn + 1} · running\n"]
            self.partial = ""
        elif isinstance(event, TextDelta):
            self.pieces.append(event.text)
        elif isinstance(event, OutputDelta):
            self.partial = partial_line(event)
        elif isinstance(event, ModelRequested) and event.call > 0:
            self.pieces.append("\n")
            self.partial = ""  # another answer begins
        elif isinstance(event, ToolCallStarted):
            self.pieces.append(f"\n→ {event.name}({event.arguments})")
        elif isinstance(event, ToolCallFinished):
            outcome = f"error: {event.error}" if event.error is not None else event.result
            self.pieces.append(f"\n← {event.name}: {outcome}\n")
        else:
            return
        self._show(_LiveText("".join(self.pieces) + self.partial))

    def _show(self, obj: Any) -> None:
        if self.handle is None:
            self.handle = display(_LiveText(""), display_id=True)
        self.handle.update(obj)

    def finish(self, turn: TurnRecord, show_error: bool = True) -> None:
        """Empty the live view and leave the turn's static record below it."""
        if self.handle is not None:
            self.handle.update(_LiveText(""))
        display(TurnView(turn, show_error))


def partial_line(delta: OutputDelta) -> str:
    """How the live view shows the typed output so far: its JSON data, on a line of its own."""
    label = "output" if delta.complete else "output so far"
    return f"\n{label} ({delta.output_type}): {json.dumps(delta.data, ensure_ascii=False, default=str)}"


STATIC_CSS_CLASS = "agentnb-static-inspector"
"""The class of the inspector's static stand-in (shown where the live widget cannot render)."""


STATIC_NOTE = "a static view: re-run this cell for the live inspector"
"""What the static view says of itself (as js/saved.js says it)."""

STATIC_CUT = 300
"""Characters of a message, answer, argument list or tool result the static view keeps."""


def _cut(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= STATIC_CUT else text[: STATIC_CUT - 1] + "…"


def static_text(agent: Any) -> str:
    """The agent's latest turn as text, in the form the front end writes at a save in JupyterLab
    (js/saved.js): a header (agent, model, turns), who is in charge after a handoff, then the
    last turn's message (and where it was routed), tool calls and answer or error (or, paused, what
    it waits for). Deterministic
    (no times): the full record is the ``%%chat`` cell's."""
    history = agent.history
    turns = len(history)
    lines = [f"{agent.name} · inspector · model {agent.model.label} · {turns} turn(s) · {STATIC_NOTE}"]
    if getattr(agent, "in_charge", None) is not None:
        lines.append(f"in charge: {agent.agent_in_charge().name} (a handoff left it answering)")
    if not turns or history[-1].status == "running":
        return "\n".join(lines)
    last = history[-1]
    routed = routed_run(last)
    status = f"turn {last.index + 1} · {last.status}" + (f" · routed to {routed.agent}" if routed else "")
    lines += [status, f"user: {_cut(last.message)}"]
    lines.extend(f"  + {part_line(p)}" for p in asked_parts(last))
    # A routed turn's one call is the handoff made for it, not a call of the model's.
    for number, call in enumerate([] if routed else last.tool_calls, 1):
        outcome = f"error: {_cut(call.error)}" if call.error is not None else _cut(call.result)
        lines.append(f"  {number}. {call.name}({_cut(call.arguments)}) -> {outcome}")
        lines.extend(f"     + {part_line(p)}" for p in call.attachments)
    if last.status == "paused":  # what it waits for, one line per item (a member's too)
        lines.append(f"paused: {PAUSED_NOTE}")
        lines.extend(f"  {line}" for line in pending_lines(last))
    else:
        lines.append(
            f"error: {_cut(last.error)}" if last.status == "failed" else f"answer: {_cut(last.content)}"
        )
    return "\n".join(lines)


def static_view(agent: Any) -> str:
    """The inspector as static HTML (``static_text``, escaped: nothing in it is markup), the same
    stand-in a save in JupyterLab writes (``agentnb.serverext.static_html``), with the last
    turn's images as small thumbnails."""
    head, _, rest = static_text(agent).partition("\n")
    body = (
        '<pre style="white-space:pre-wrap;word-break:normal;overflow-wrap:break-word">'
        f"{html.escape(rest, quote=True)}</pre>"
        if rest
        else ""
    )
    history = agent.history
    last = history[-1] if len(history) and history[-1].status != "running" else None
    figures = static_figures(static_images(last)) if last is not None else ""
    return (
        f'<div class="{STATIC_CSS_CLASS} tex2jax_ignore mathjax_ignore">'
        f"<div>{html.escape(head, quote=True)}</div>{body}{figures}</div>"
    )


__all__ = ["LIVE_CSS_CLASS", "STATIC_CSS_CLASS", "LiveTurn", "TurnView", "static_text", "static_view"]
