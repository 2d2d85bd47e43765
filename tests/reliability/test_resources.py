"""What a turn costs on disk next to a large state value: a turn that changes a small key writes
about what changed, not the large value again; where the value is shown to the model (state in
the prompt, the agentic tool's answer) it should be written once per turn, not once per copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from campaign import Tally

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.sessions import JSONSession

BIG = 1_000_000
"""Characters in the large state value."""


def bump(session_state: dict) -> str:
    """Count up."""
    session_state["n"] = session_state.get("n", 0) + 1
    return "ok"


def bytes_per_turn(tmp_path: Path, step, turns: int = 3, **options) -> list[int]:
    folder = tmp_path / "s"
    agent = Agent(
        "r",
        ScriptedModel([step, "done"] * (turns + 1)),
        tools=[bump],
        session_state={"big": "x" * BIG},
        session=JSONSession(folder, compact_min_bytes=1 << 40),  # no compaction: appends only
        **options,
    )
    agent.run("first")  # the first save holds the value once, as it must
    sizes = []
    for i in range(turns):
        before = sum(p.stat().st_size for p in folder.iterdir())
        agent.run(f"turn {i}")
        sizes.append(sum(p.stat().st_size for p in folder.iterdir()) - before)
    return sizes


def test_a_turn_that_changes_a_small_key_writes_about_the_change(tmp_path):
    sizes = bytes_per_turn(tmp_path, tool_call("bump"))
    tally = Tally("resources: bytes written per turn beside a 1 MB value")
    for size in sizes:
        tally.check(None if size < 64_000 else f"{size} bytes", size)
    assert max(sizes) < 64_000, sizes


@pytest.mark.parametrize(
    "step, options",
    [
        (tool_call("bump"), {"add_session_state_to_context": True}),
        (tool_call("update_session_state", session_state_updates={"n": 1}), {"enable_agentic_state": True}),
    ],
    ids=["state in the prompt", "agentic state"],
)
def test_a_large_value_shown_to_the_model_is_written_once_per_turn(tmp_path, step, options):
    sizes = bytes_per_turn(tmp_path, step, **options)
    tally = Tally("resources: bytes written per turn beside a 1 MB value")
    for size in sizes:
        tally.check(None if size < 2 * BIG else f"{size / BIG:.1f} x the value", size)
    assert max(sizes) < 2 * BIG, sizes
