"""A turn with a 1 MB image against a text turn, recording and replay; and a session's size after
many turns sending the same image, against Agno's.

**Turns.** Two agents on ``OpenAIChat`` against the loopback OpenAI server (``tests/openai_server.py``,
a process of its own, answering at once), each attached to a recording of its own, as a
notebook's ``%%agent`` is: one sends ``"question i"``, the other ``["question i", <the PNG's
bytes>]`` (converted each turn, as a notebook passes its figure again). Turns are interleaved,
text then image, so the machine's load hits both alike. *Recording*: every turn goes to the
server (the image as a 1.4 MB ``data:`` URL) and is written to the recording (the image once, in
``blobs/``). *Replay*: two new agents attached to those recordings run the same turns, each
answered from the recording (matched by hash; no request is sent).

**Session size.** An agent with a ``JSONSession`` (and one with a ``SQLiteSession``) autosaving,
on ``ScriptedModel``, ``--size-turns`` turns each sending the same image, against as many text
turns; Agno's numbers come from ``peers/agno_images.py`` (``--agno-python``), same image.

    .venv/bin/python benchmarks/bench_images.py --turns 50 --size-turns 100 \\
        --agno-python /tmp/anchors/venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import measure  # noqa: E402
from bench_evals import start_server  # noqa: E402


def image_1mb() -> bytes:
    """A 1,024 x 341 PNG of noise (it does not compress: about 1 MB), the same on every run."""
    from agentnb.messages.png import encode_png

    width, height = 1024, 341
    return encode_png(random.Random(39).randbytes(width * height * 3), width, height, 3)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and p.suffix != ".lock")


def analyst(url: str, folder: Path) -> Any:
    from agentnb import Agent
    from agentnb.models import OpenAIChat

    agent = Agent("analyst", OpenAIChat("gpt-bench", base_url=url, api_key="x", stream=False))
    recording = agent.attach_recording(folder, mode="auto")
    return agent, recording


def turns(url: str, n: int, warmup: int, image: bytes, root: Path) -> dict[str, Any]:
    """Recording, then replay: per-turn wall and CPU ms of text and image turns, interleaved."""
    from agentnb import Image

    messages = {"text": lambda i: f"question {i}", "image": lambda i: [f"question {i}", Image(image)]}
    out: dict[str, Any] = {}
    for phase in ("recording", "replay"):
        agents = {kind: analyst(url, root / kind) for kind in messages}
        wall: dict[str, list[float]] = {kind: [] for kind in messages}
        cpu: dict[str, list[float]] = {kind: [] for kind in messages}
        for i in range(warmup + n):
            for kind, (agent, _) in agents.items():
                c0, t0 = time.process_time_ns(), time.perf_counter_ns()
                result = agent.run(messages[kind](i))
                t1, c1 = time.perf_counter_ns(), time.process_time_ns()
                assert result.status == "ok", result.error
                if i >= warmup:
                    wall[kind].append((t1 - t0) / 1e6)
                    cpu[kind].append((c1 - c0) / 1e6)
        out[phase] = {
            kind: {
                "wall_ms": measure.summary(wall[kind]),
                "cpu_ms": measure.summary(cpu[kind]),
                "replayed": recording.replayed,
            }
            for kind, (_, recording) in agents.items()
        }
        if phase == "replay":
            assert all(r.replayed == warmup + n for _, r in agents.values()), "a turn was not replayed"
    out["recording_bytes"] = {kind: folder_bytes(root / kind) for kind in messages}
    return out


def session_sizes(n: int, image: bytes, root: Path) -> dict[str, Any]:
    """Bytes a session takes after ``n`` image turns, and after ``n`` text turns."""
    from agentnb import Agent, Image, ScriptedModel
    from agentnb.sessions import JSONSession, SQLiteSession

    out: dict[str, Any] = {}
    for kind in ("text", "image"):
        for backend in ("json", "sqlite"):
            where = root / f"{kind}-{backend}"
            session = JSONSession(where) if backend == "json" else SQLiteSession(where / "s.db")
            agent = Agent("analyst", ScriptedModel(lambda request: "seen"), session=session)
            t0 = time.perf_counter_ns()
            for i in range(n):
                agent.run(f"question {i}" if kind == "text" else [f"question {i}", Image(image)])
            session.flush()
            elapsed = (time.perf_counter_ns() - t0) / 1e6
            if backend == "sqlite":
                import sqlite3

                with sqlite3.connect(where / "s.db") as conn:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            out[f"{kind}_{backend}"] = {"bytes": folder_bytes(where), "ms_per_turn": elapsed / n}
    return out


def agno_sizes(python: str, image_path: Path, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [
                python,
                str(HERE / "peers" / "agno_images.py"),
                "--image",
                str(image_path),
                "--turns",
                str(n),
                "--out",
                out,
            ],
            check=True,
            env={**os.environ, "ANCHORS": os.environ.get("ANCHORS", str(Path(python).parents[2]))},
        )
        return json.loads((Path(out) / "agno_images.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--size-turns", type=int, default=100)
    parser.add_argument("--agno-python", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    image = image_1mb()
    result: dict[str, Any] = {"image_bytes": len(image), "loadavg_start": measure.loadavg()}
    proc, url = start_server(0.0)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            result["turns"] = turns(url, args.turns, args.warmup, image, Path(scratch))
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    with tempfile.TemporaryDirectory() as scratch:
        result["sizes"] = session_sizes(args.size_turns, image, Path(scratch))
        if args.agno_python:
            path = Path(scratch) / "image.png"
            path.write_bytes(image)
            result["agno"] = agno_sizes(args.agno_python, path, args.size_turns)
    result["loadavg_end"] = measure.loadavg()
    measure.write_json(args.out, "bench_images", result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
