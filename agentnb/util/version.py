"""The version of agentnb, defined here only: the package's ``__version__`` re-exports it and
the build reads it (``pyproject.toml``'s dynamic version), so a wheel's metadata agrees."""

from __future__ import annotations

__version__ = "0.1.0"
