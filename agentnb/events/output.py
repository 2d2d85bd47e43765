"""The events of a typed run's answers: each answer checked against the ``output_type``
(``OutputChecked``), and the output so far while an answer streams in (``OutputDelta``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..util.fastinit import fast_init


@fast_init
@dataclass(frozen=True, kw_only=True)
class OutputChecked:
    """An answer checked against the run's ``output_type`` (one event per attempt)."""

    kind: Literal["output_checked"] = "output_checked"
    """Always ``"output_checked"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    call: int
    """Which model call gave the answer (0 = the first)."""
    attempt: int
    """Which attempt this was (1 = the first answer)."""
    mode: str
    """How the output was asked for: native, tool or prompted."""
    ok: bool
    """Whether the answer matched (and every output validator took it)."""
    errors: tuple[dict[str, str], ...] = ()
    """What was wrong: ``{"path": ..., "message": ...}`` each (a validator's reason has no path
    and names the ``validator``)."""
    output: Any = None
    """The output as JSON data, when ok."""
    text: str = ""
    """The answer as checked (its text, or the output tool's arguments), cut to 2,000 characters."""
    tool_call_id: str | None = None
    """In tool mode, the call of the output tool that carried it."""
    output_type: str = ""
    """The output type's name."""
    fingerprint: str = ""
    """The output type's schema and validators, hashed (replay names a change as drift)."""
    validators: tuple[str, ...] = ()
    """The output validators that checked it, by name."""


@fast_init
@dataclass(frozen=True, kw_only=True)
class OutputDelta:
    """The typed output so far, while the answer streams in (native mode: the JSON text; tool
    mode: the output tool's arguments). Only runs with a structured ``output_type`` have them;
    like ``TextDelta`` they go to subscribers and ``iter_run`` and are not kept in the record."""

    kind: Literal["output_delta"] = "output_delta"
    """Always ``"output_delta"``: what kind of event this is."""
    run_id: str
    """The run this event belongs to."""
    call: int
    """Index of the model call within the run (0-based): each answer streams from nothing."""
    mode: str
    """How the output is asked for: native or tool."""
    output_type: str
    """The output type's name."""
    data: Any
    """The answer so far as JSON data, parsed leniently: what has arrived of each string, list
    and object, without a number or a word (``true``) that may not be whole yet. Each delta of
    an answer extends the one before."""
    output: Any
    """The answer so far as the output type where it validates partially (pydantic's
    ``experimental_allow_partial``: a list's last item left out while it is not valid yet; an
    object once its required fields are all there), else the raw ``data``; ``validated`` says
    which."""
    validated: bool = False
    """Whether ``output`` passed partial validation (else it is the raw ``data``)."""
    complete: bool = False
    """Whether the whole answer has arrived (the last delta of this model call)."""
    tool: str | None = None
    """In tool mode, the output tool being called."""


__all__ = ["OutputChecked", "OutputDelta"]
