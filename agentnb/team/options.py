"""A team's mode: coordinate, route or broadcast, as given or as Agno's flags name it."""

from __future__ import annotations

from ..errors import TeamDefinitionError

MODES = ("coordinate", "route", "broadcast")
"""Every mode a team may run in."""

_FLAGS = {"route": "respond_directly", "broadcast": "delegate_to_all_members"}
"""The Agno flag that means each mode."""


def team_mode(
    name: str, mode: str | None, respond_directly: bool | None, delegate_to_all_members: bool | None
) -> str:
    """The team's mode: ``mode`` when given (Agno: an explicit mode wins), else the one Agno's
    flags name; a flag that says otherwise than the mode given, or two flags that each name a
    mode, are refused rather than one silently losing."""
    flags = {"respond_directly": respond_directly, "delegate_to_all_members": delegate_to_all_members}
    named = [_MODE_OF[flag] for flag, value in flags.items() if value]
    if mode is None:
        if len(named) > 1:
            raise TeamDefinitionError(
                f"team {name!r}: respond_directly=True (route mode: one member answers) and "
                "delegate_to_all_members=True (broadcast mode: every member answers) contradict each "
                "other; give one, or mode='route' / mode='broadcast'"
            )
        return named[0] if named else "coordinate"
    if mode not in MODES:
        hint = " (Agno's tasks mode is not supported)" if mode == "tasks" else ""
        raise TeamDefinitionError(f"mode must be one of {', '.join(MODES)}; got {mode!r}{hint}")
    for flag, value in flags.items():
        if value is not None and bool(value) != (_FLAGS.get(mode) == flag):
            why = f"which means mode={_MODE_OF[flag]!r}" if value else f"mode={mode!r} sets it to True"
            raise TeamDefinitionError(
                f"team {name!r}: mode={mode!r} contradicts {flag}={bool(value)} ({why}); give the mode "
                "alone, which sets respond_directly and delegate_to_all_members"
            )
    return mode


_MODE_OF = {flag: mode for mode, flag in _FLAGS.items()}
