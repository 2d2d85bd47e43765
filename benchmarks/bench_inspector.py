"""Inspector traffic and notebook growth (run on demand, not in the test suite).

1. Bytes sent to the front end, and Python-side time per update, for a turn that changes one key
   of a 10,000-node state (a dict of 10,000 small dicts), with the inspector attached and no
   front end connected (every message is still built, serialised and counted:
   ``messages_sent`` / ``bytes_sent`` / ``last_message_bytes``). The same turn on a 10-node state
   shows that the traffic depends on the change, not on the state; the size of a full snapshot
   (what a fresh view asks for once) is printed for contrast.
2. Notebook file growth per ``%%chat`` turn: N ``%%chat`` cells run in a real IPython shell,
   their outputs written as an .ipynb (nbformat) the way Jupyter saves them, for N = 1, 10, 50.

    python benchmarks/bench_inspector.py [--json results/inspector.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def nodes(n: int) -> dict:
    return {f"n{i:05d}": {"label": f"node {i}", "value": i, "tags": ["a", "b"]} for i in range(n)}


def make_agent(n_nodes: int):
    from agentnb import Agent, ScriptedModel, tool_call

    turns = itertools.count(1)

    def model(request):
        if not request.tool_results():
            turn = next(turns)  # a different node and value every turn
            return tool_call("set_value", key=f"n{turn * 7919 % n_nodes:05d}", value=-turn)
        return "updated"

    def set_value(session_state: dict, key: str, value: int) -> str:
        """Set one node's value."""
        session_state["nodes"][key]["value"] = value
        return f"{key} = {value}"

    return Agent("graph", ScriptedModel(model), tools=[set_value], session_state={"nodes": nodes(n_nodes)})


def traffic(n_nodes: int, turns: int = 30) -> dict:
    from agentnb.ipython import wire
    from agentnb.ipython.inspector import Inspector

    agent = make_agent(n_nodes)
    inspector = Inspector.for_agent(agent)
    # Time the inspector's own work: replace its subscription by a timed call of the same method.
    inspector._unsubscribe()
    per_turn_ns: list[int] = []
    acc = [0]

    def timed(event) -> None:
        t0 = time.perf_counter_ns()
        inspector._on_event(event)
        acc[0] += time.perf_counter_ns() - t0

    inspector._unsubscribe = agent.subscribe(timed)
    agent.run("warm up")
    bytes_per_turn, msgs_per_turn, state_msg = [], [], []
    for i in range(turns):
        b0, m0 = inspector.bytes_sent, inspector.messages_sent
        acc[0] = 0
        sizes: list[tuple[str, int]] = []
        orig_post = inspector._post

        def post(message, _orig=orig_post, _sizes=sizes):
            _orig(message)
            body = message.get(wire.EVENT_BODY) or {}
            _sizes.append((body.get("kind", message.get(wire.KIND)), inspector.last_message_bytes))

        inspector._post = post
        result = agent.run(f"change one node ({i})")
        inspector._post = orig_post
        assert result.content == "updated"
        per_turn_ns.append(acc[0])
        bytes_per_turn.append(inspector.bytes_sent - b0)
        msgs_per_turn.append(inspector.messages_sent - m0)
        state_msg.append(max((s for k, s in sizes if k == "state_changed"), default=0))
    snapshot = len(json.dumps(inspector.snapshot(), separators=(",", ":")))
    state_bytes = len(json.dumps(agent.session_state, separators=(",", ":")))
    inspector.close()
    return {
        "nodes": n_nodes,
        "state_json_bytes": state_bytes,
        "bytes_per_turn_median": statistics.median(bytes_per_turn),
        "messages_per_turn_median": statistics.median(msgs_per_turn),
        "state_changed_message_bytes_median": statistics.median(state_msg),
        "python_ms_per_turn_median": statistics.median(per_turn_ns) / 1e6,
        "python_us_per_message_median": statistics.median(t / m for t, m in zip(per_turn_ns, msgs_per_turn)) / 1e3,
        "snapshot_bytes": snapshot,
    }


def notebook_growth(counts=(1, 10, 50), n_nodes: int = 10) -> dict:
    """Size of an .ipynb holding N %%chat cells with their saved outputs."""
    import nbformat
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "agentnb")
    shell.user_ns["graph"] = make_agent(n_nodes)
    cells = []
    out: dict = {"state_nodes": n_nodes}
    done = 0
    for target in counts:
        while done < target:
            source = f"%%chat graph\nchange one node ({done})"
            with capture_output(display=True) as cap:
                shell.run_cell(source, store_history=False)
            # What Jupyter saves: each display area's last content; live updates replace it.
            outputs = [nbformat.v4.new_output("display_data", data=o.data, metadata=o.metadata or {}) for o in cap.outputs[-1:]]
            cells.append(nbformat.v4.new_code_cell(source, outputs=outputs, execution_count=done + 1))
            done += 1
        nb = nbformat.v4.new_notebook(cells=list(cells))
        out[f"ipynb_bytes_{target}_turns"] = len(nbformat.writes(nb).encode())
    empty = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"%%chat graph\nchange one node ({i})") for i in range(done)])
    out["ipynb_bytes_without_outputs"] = len(nbformat.writes(empty).encode())
    first, last = counts[0], counts[-1]
    out["bytes_per_turn"] = (out[f"ipynb_bytes_{last}_turns"] - out[f"ipynb_bytes_{first}_turns"]) / (last - first)
    out["output_bytes_per_turn"] = (out[f"ipynb_bytes_{last}_turns"] - out["ipynb_bytes_without_outputs"]) / last
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", default=None, help="write the figures here")
    args = p.parse_args(argv)
    result = {"traffic": [traffic(10_000), traffic(10)], "notebook": notebook_growth()}
    for row in result["traffic"]:
        print(
            f"inspector, {row['nodes']:>6} nodes (state {row['state_json_bytes'] / 1e3:.0f} kB): "
            f"{row['bytes_per_turn_median']:.0f} B/turn in {row['messages_per_turn_median']:.0f} messages "
            f"(state_changed message {row['state_changed_message_bytes_median']:.0f} B); "
            f"Python {row['python_ms_per_turn_median']:.3f} ms/turn, "
            f"{row['python_us_per_message_median']:.0f} us/message; full snapshot {row['snapshot_bytes'] / 1e3:.0f} kB"
        )
    nb = result["notebook"]
    print(
        f"notebook: {nb['bytes_per_turn']:.0f} B per %%chat turn "
        f"(1 turn {nb['ipynb_bytes_1_turns']} B, 10 turns {nb['ipynb_bytes_10_turns']} B, 50 turns {nb['ipynb_bytes_50_turns']} B)"
    )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
