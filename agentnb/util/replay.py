"""The replay mode a recording runs in (``AGENTNB_REPLAY``): here, apart from the recordings
themselves, so that what only reads the setting (the pytest plugin, loaded at every pytest
start) imports nothing else of agentnb."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import ConfigurationError

REPLAY_ENV = "AGENTNB_REPLAY"
"""Environment variable: ``auto`` (default), ``strict`` (a drift fails) or ``live`` (never replay;
every turn is recorded again)."""

MODES = ("auto", "strict", "live")

RERECORD = (
    "to re-record, run the notebook once outside nbval with the model reachable "
    "(Restart & Run All, or jupyter nbconvert --execute --inplace) and commit its .agentnb folder"
)
"""How to bring a recording up to date with an edited notebook (said when strict replay fails)."""


def replay_mode(environ: Mapping[str, str] | None = None) -> str:
    """The replay mode from ``AGENTNB_REPLAY`` (``auto`` when unset)."""
    value = (os.environ if environ is None else environ).get(REPLAY_ENV, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ConfigurationError(
            f"{REPLAY_ENV}={value!r} is not a replay mode; use one of {', '.join(MODES)}"
        )
    return value


__all__ = ["MODES", "REPLAY_ENV", "RERECORD", "replay_mode"]
