"""A delegation's framework overhead: a turn with one tool call, against a turn whose one tool
call delegates to a member that makes the same tool call (Team, coordinate mode), in agentnb and
in Agno, interleaved in one run.

Same shape on both sides: the fake models answer at once (their time is measured and reported
apart: the *framework* time is wall minus fake model) and ask for one call, then answer; the tool
appends to ``items`` in the session state; the team's member runs on a copy of the team's state
and its change is merged back (both frameworks check ``items == ["x"]`` after every turn). Agno
runs in the anchor harness's venv (``peers/agno_team.py``), no db. Medians over processes of the
per-process medians (``--procs``), each process timing ``--n`` turns after a warm-up.

    .venv/bin/python benchmarks/bench_delegation.py --agno-python $ANCHORS/venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import measure  # noqa: E402


def add_item(item: str, session_state) -> str:  # type: ignore[no-untyped-def]
    """Add an item to the list kept in session state."""
    session_state["items"].append(item)
    return f"added {item}"


def agentnb_series(case: str, n: int, warmup: int) -> dict[str, Any]:
    from agentnb import Agent, ScriptedModel, Team
    from agentnb.models.base import ModelResponse

    clock = measure.ModelClock()

    def fake(name: str, arguments: dict[str, Any]) -> ScriptedModel:
        call = ModelResponse(
            tool_calls=(
                __import__("agentnb").ToolCall(id="call_0", name=name, arguments=json.dumps(arguments)),
            ),
            finish_reason="tool_calls",
        )
        done = ModelResponse(content="done", finish_reason="stop")

        def reply(request: Any) -> Any:
            tools_done = sum(1 for m in request.messages if m["role"] == "tool")
            return done if tools_done else call

        model = ScriptedModel(stream=False)
        model.stream = clock.timed_iter(lambda request: iter([reply(request)]))  # type: ignore[method-assign]
        return model

    if case == "plain":
        runner: Any = Agent(
            "plain", fake("add_item", {"item": "x"}), tools=[add_item], session_state={"items": []}
        )
    else:
        member = Agent("worker", fake("add_item", {"item": "x"}), tools=[add_item])
        runner = Team(
            "team",
            members=[member],
            model=fake("delegate_task_to_member", {"member_id": "worker", "task": "add x"}),
            session_state={"items": []},
        )
    members = getattr(runner, "members", [])

    def turn() -> Any:
        return runner.run("add x")

    def check(result: Any) -> None:
        assert result.content == "done", result.content
        assert result.state["items"] == ["x"], result.state
        runner.session_state = {"items": []}
        # The histories grow as agentnb keeps them; Agno (no db) keeps none: empty ours too.
        for agent in (runner, *members):
            agent.history.clear()

    return measure.run_series(turn, check, n, warmup, clock)


def one_process(
    framework: str, case: str, n: int, warmup: int, agno_python: str | None
) -> tuple[float, float]:
    """The median framework (wall minus fake model) and process CPU times per turn of one fresh
    process."""
    with tempfile.TemporaryDirectory() as out:
        if framework == "agentnb":
            command = [
                sys.executable,
                __file__,
                "--child",
                case,
                "--n",
                str(n),
                "--warmup",
                str(warmup),
                "--out",
                out,
            ]
        else:
            command = [
                agno_python,
                str(HERE / "peers" / "agno_team.py"),
                "--case",
                case,
                "--n",
                str(n),
                "--warmup",
                str(warmup),
                "--out",
                out,
            ]
        subprocess.run(command, check=True, capture_output=True, text=True)
        (path,) = Path(out).glob("*.json")
        series = json.loads(path.read_text())["series"]
        return series["framework_ms"]["median"], series["cpu_ms"]["median"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agno-python", default=None, help="the anchors' venv python, to run Agno's side")
    p.add_argument("--procs", type=int, default=5)
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--child", choices=["plain", "team"], default=None)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if args.child:
        out = {
            "framework": "agentnb",
            "case": args.child,
            "series": agentnb_series(args.child, args.n, args.warmup),
        }
        measure.write_json(args.out, f"delegation_agentnb_{args.child}", out)
        return
    frameworks = ["agentnb"] + (["agno"] if args.agno_python else [])
    results: dict[tuple[str, str], list[tuple[float, float]]] = {
        (f, c): [] for f in frameworks for c in ("plain", "team")
    }
    for _ in range(args.procs):  # interleaved: the machine's load hits every series alike
        for framework in frameworks:
            for case in ("plain", "team"):
                results[framework, case].append(
                    one_process(framework, case, args.n, args.warmup, args.agno_python)
                )
    print(f"load average {measure.loadavg()}; {args.procs} processes x {args.n} turns per series")
    for column, label in ((0, "framework time (wall minus fake model)"), (1, "process CPU time")):
        print(f"\n{label}, median of per-process medians [min–max]:\n")
        print(
            "| framework | plain tool call | delegation (team → member → same tool call) | delegation − plain | ratio |"
        )
        print("| --- | ---: | ---: | ---: | ---: |")
        for framework in frameworks:
            plain_runs = [r[column] for r in results[framework, "plain"]]
            team_runs = [r[column] for r in results[framework, "team"]]
            plain, team = statistics.median(plain_runs), statistics.median(team_runs)
            span = lambda xs: f"[{min(xs):.3f}–{max(xs):.3f}]"  # noqa: E731
            print(
                f"| {framework} | {plain:.3f} ms {span(plain_runs)} | {team:.3f} ms {span(team_runs)} | {team - plain:.3f} ms | {team / plain:.2f}× |"
            )


if __name__ == "__main__":
    main()
