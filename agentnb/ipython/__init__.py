"""The notebook layer: magics, turn records and the inspector. The only place that imports
IPython, ipywidgets or anywidget; ``import agentnb`` never loads it."""

from __future__ import annotations

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agentnb``: register ``%%agent``, ``%%tool``, ``%%chat`` and ``%agentnb``.

    Each load starts a fresh workspace (agents, tools registered by ``%%tool``, defaults)."""
    from ..util.extras import require

    require("notebook", "%load_ext agentnb", ("ipywidgets", "anywidget"))
    from .magics import register_magics

    register_magics(ipython)


__all__ = ["load_ipython_extension"]
