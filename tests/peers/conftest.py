"""Fixtures for the peer ports: running a seed's example script with its imports changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

ScriptRunner = Callable[..., dict[str, Any]]


def _run_script(code: str, imports: dict[str, str], names: dict[str, Any] | None = None) -> dict[str, Any]:
    """Execute ``code`` as ``__main__`` after replacing each import line (which must be there);
    ``names`` are bound first (e.g. a model class name bound to a factory of a ScriptedModel)."""
    for old, new in imports.items():
        assert old in code, f"the seed's import {old!r} is not in the script"
        code = code.replace(old, new)
    namespace: dict[str, Any] = {"__name__": "__main__", **(names or {})}
    exec(compile(code, "<seed example>", "exec"), namespace)  # the seed's own code, nothing else
    return namespace


@pytest.fixture
def run_seed_script() -> ScriptRunner:
    """``run_seed_script(code, {old_import: new_import}, {name: value})`` -> the script's globals."""
    return _run_script
