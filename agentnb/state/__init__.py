"""The session state and what records it: tracked and frozen values, diffs, who changed what,
edits by hand, and the state-module protocol sessions save through.

``State``, ``merge_lists`` and ``replace_values`` are re-exported here because a saved session
names a reducer by its dotted path, and sessions written before the state became a package name
them ``agentnb.state.merge_lists``.
"""

from __future__ import annotations

from .state import State, merge_lists, replace_values

__all__ = ["State", "merge_lists", "replace_values"]
