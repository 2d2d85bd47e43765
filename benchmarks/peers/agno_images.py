"""Agno with a session database, a turn per image: the session's size after many turns sending
the same image, and a turn's time with and without it (run with the anchor harness's venv).

The agent of ``bench_images.py`` in Agno: a fake ``OpenAIChat`` whose ``invoke`` answers at once
(as ``agno_turns.py``), ``db=SqliteDb(...)`` (Agno saves the session and the run at the end of
every ``run``), each turn ``agent.run(text, images=[Image(content=<the PNG's bytes>)])`` — Agno's
way to send an image it holds as bytes. Text turns are the baseline. The database file is
measured after ``--turns`` turns of each kind (WAL checkpointed first, so the file holds it all).

    ANCHORS=/tmp/anchors $ANCHORS/venv/bin/python benchmarks/peers/agno_images.py --image IMG.png
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))
sys.path.insert(0, os.environ.get("ANCHORS", "/tmp/anchors"))

import common  # noqa: E402  (the anchor harness: network guard)

common.install_netguard()

from dataclasses import dataclass  # noqa: E402
from importlib.metadata import version  # noqa: E402
from typing import Any  # noqa: E402

import measure  # noqa: E402
from agno.agent import Agent  # noqa: E402
from agno.db.sqlite import SqliteDb  # noqa: E402
from agno.media import Image  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from agno.models.response import ModelResponse  # noqa: E402


@dataclass
class FakeOpenAIChat(OpenAIChat):
    """OpenAIChat with invoke overridden: instant, deterministic, no network."""

    def invoke(self, messages, assistant_message, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[no-untyped-def]
        images = sum(len(m.images or []) for m in messages)
        return ModelResponse(role="assistant", content=f"seen {images} image(s)")


def series(path: Path, image: bytes | None, turns: int) -> list[float]:
    """Wall ms of each turn of an agent saving to a SQLite file at ``path``."""
    agent = Agent(model=FakeOpenAIChat(id="gpt-4o-mini"), db=SqliteDb(db_file=str(path)), session_id="bench")
    times = []
    for i in range(turns):
        t0 = time.perf_counter_ns()
        if image is None:
            out = agent.run(f"question {i}")
        else:
            out = agent.run(f"question {i}: what does the chart show?", images=[Image(content=image)])
        times.append((time.perf_counter_ns() - t0) / 1e6)
        assert out.content == ("seen 0 image(s)" if image is None else "seen 1 image(s)"), out.content
    return times


def db_size(path: Path) -> int:
    """The database's bytes once its write-ahead log is folded in."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--image", required=True, help="the PNG every image turn sends")
    p.add_argument("--turns", type=int, default=100)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    image = Path(args.image).read_bytes()
    out: dict[str, Any] = {"framework": "agno", "version": version("agno"), "image_bytes": len(image)}
    with tempfile.TemporaryDirectory() as scratch:
        for kind, data in (("text", None), ("image", image)):
            path = Path(scratch) / f"{kind}.db"
            times = series(path, data, args.turns)
            out[kind] = {
                "turns": args.turns,
                "wall_ms": measure.summary(times[5:]),
                "session_bytes": db_size(path),
            }
    measure.write_json(args.out, "agno_images", out)


if __name__ == "__main__":
    main()
