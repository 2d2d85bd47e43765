"""Inspector traffic, its first message, and notebook growth (run on demand, not in the test suite).

Every widget message takes ipykernel's real send path (``kernel_stub.py``: ipywidgets →
``Comm.publish_msg`` → ``json_clean`` → ``Session.send``, which builds, serialises and signs the
message), so the kernel's own encoding is in every time and every byte counted here; only the
ZeroMQ transport is missing.

1. A K=1 turn that changes one node of a 10,000-node state (``states.nested_nodes``), and the
   same turn on a 10-node state: messages and bytes per turn on the wire (and the inspector's
   own JSON), and the time the inspector takes per turn (its subscriber and the flush thread's
   batches), kernel send included and garbage-collector pauses left out, as means over the
   series;
   then the same with the snapshot trait refreshed after every turn, as when each turn is a
   cell of its own (``Inspector._after_cell``).
2. The first message a view gets (the snapshot, answering the browser's ``sync``) for those
   states: its size on the wire and the time to build it (``Inspector.snapshot``: the lazy
   state and our one JSON encoding) and to send it (the kernel's serialisation of the rest and
   its signature), medians over repetitions.
3. Notebook file growth per ``%%chat`` turn: N ``%%chat`` cells run in a real IPython shell,
   their outputs written as an .ipynb (nbformat) the way Jupyter saves them, for N = 1, 10, 50.

    python benchmarks/bench_inspector.py [--json results/inspector.json]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import kernel_stub  # noqa: E402
import measure  # noqa: E402
import states  # noqa: E402


def make_agent(n_nodes: int) -> Any:
    from agentnb import Agent, ScriptedModel, tool_call

    turns = itertools.count(1)

    def model(request: Any) -> Any:
        if not request.tool_results():
            turn = next(turns)  # a different node and value every turn
            return tool_call("set_value", key=states.node_key(states.turn_target(turn, n_nodes)), value=-turn)
        return "updated"

    def set_value(session_state: dict, key: str, value: int) -> str:
        """Set one node's value."""
        session_state["nodes"][key]["value"] = value
        return f"{key} = {value}"

    return Agent(
        "graph",
        ScriptedModel(model, stream=False),
        tools=[set_value],
        session_state=states.nested_nodes(n_nodes),
    )


def traffic(socket: kernel_stub.CountingSocket, n_nodes: int, turns: int = 30) -> dict:
    """Messages, bytes and the inspector's time per K=1 turn that changes one node.

    In a loop of quick turns a run's end waits for the batch's deadline unless no batch went out
    in the last 50 ms, so most turns send nothing themselves: the figures per turn are the
    series' totals divided by its turns (``mean`` in each summary), the batches the flush thread
    sent and the one left at the end included."""
    from agentnb.ipython import wire
    from agentnb.ipython.inspector import Inspector

    agent = make_agent(n_nodes)
    socket.reset()
    inspector = Inspector.for_agent(agent)
    opened = {"messages": socket.messages, "bytes": socket.bytes}  # the widget's comm_open and state
    # Time the inspector's own work, the kernel's send included: replace its subscription by a
    # timed call of the same function, and time the flush thread's calls too.
    inspector._unsubscribe()
    acc = [0]
    # A full garbage collection (tens of ms with a 10,000-node history) runs wherever the
    # allocations that make it due happen: its pauses inside the timed work are counted apart.
    paused = [0, 0]  # ns of collector pauses inside the timed work; the start of the current one
    timing = [False]

    def collected(phase: str, _info: dict) -> None:
        if timing[0]:
            if phase == "start":
                paused[1] = time.perf_counter_ns()
            else:
                paused[0] += time.perf_counter_ns() - paused[1]

    gc.callbacks.append(collected)

    def timed(event) -> None:
        timing[0] = True
        t0 = time.perf_counter_ns()
        inspector._on_event(event)
        acc[0] += time.perf_counter_ns() - t0
        timing[0] = False

    inspector._unsubscribe = agent.subscribe(timed)
    outbox = inspector._outbox
    timer = outbox.timer

    def timed_timer() -> float | None:
        timing[0] = True
        t0 = time.perf_counter_ns()
        try:
            return timer()
        finally:
            acc[0] += time.perf_counter_ns() - t0
            timing[0] = False

    outbox.timer = timed_timer  # type: ignore[method-assign]
    # The size of the state change's item, read from the batches as the browser gets them.
    items: list[tuple[str, int]] = []
    send = inspector.send

    def capture(content: dict, buffers: Any = None) -> None:
        send(content, buffers)
        if content.get(wire.KIND) == wire.BATCH:
            for item in json.loads(bytes(buffers[0]))[wire.ITEMS]:
                kind = item[wire.EVENT_BODY]["kind"] if wire.EVENT_BODY in item else "row"
                items.append((kind, len(json.dumps(item, separators=(",", ":")))))

    inspector.send = capture
    agent.run("warm up")
    outbox.flush()
    out: dict = {"nodes": n_nodes, "widget_open": opened}
    for label, per_cell in (("loop", False), ("cell", True)):
        per_turn_ns, cell_ns, wire_bytes, wire_msgs, own_bytes, own_msgs, gc_ns = [], [], [], [], [], [], []
        items.clear()
        for i in range(turns):
            b0, m0 = inspector.bytes_sent, inspector.messages_sent
            socket.reset()
            acc[0] = paused[0] = 0
            result = agent.run(f"change one node ({i})")
            assert result.content == "updated"
            timing[0] = True
            t0 = time.perf_counter_ns()
            if per_cell:
                inspector._after_cell()  # what IPython's post_run_cell does after a cell
            elif i == turns - 1:
                outbox.flush()  # the last batch, which the flush thread would send within 50 ms
            cell_ns.append(time.perf_counter_ns() - t0)
            timing[0] = False
            gc_ns.append(paused[0])
            per_turn_ns.append(acc[0] + cell_ns[-1] - paused[0])
            wire_bytes.append(socket.bytes)
            wire_msgs.append(socket.messages)
            own_bytes.append(inspector.bytes_sent - b0)
            own_msgs.append(inspector.messages_sent - m0)
        out[label] = {
            "wire_messages_per_turn": measure.summary(wire_msgs),
            "wire_bytes_per_turn": measure.summary(wire_bytes),
            "own_messages_per_turn_mean": statistics.fmean(own_msgs),
            "own_json_bytes_per_turn_mean": statistics.fmean(own_bytes),
            "state_changed_item_bytes_median": statistics.median(
                [n for k, n in items if k == "state_changed"] or [0]
            ),
            "rows_per_turn": sum(k == "row" for k, _ in items) / turns,
            "inspector_ms_per_turn": measure.summary([t / 1e6 for t in per_turn_ns]),
            "collector_ms_in_it": sum(gc_ns) / 1e6,
            "after_cell_ms": measure.summary([t / 1e6 for t in cell_ns]),
        }
    gc.callbacks.remove(collected)
    out["state_json_bytes"] = states.json_bytes(agent.session_state)
    out["history_len"] = len(agent.history)
    inspector.close()
    return out


def first_message(socket: kernel_stub.CountingSocket, n_nodes: int, reps: int = 15) -> dict:
    """The snapshot a fresh view asks for: its size and the time to build and to send it."""
    from agentnb.ipython import wire
    from agentnb.ipython.inspector import Inspector

    agent = make_agent(n_nodes)
    inspector = Inspector.for_agent(agent)
    for i in range(3):  # a few turns of history, as in a notebook
        agent.run(f"change one node ({i})")
    build, send, whole, trait, sizes, own = [], [], [], [], [], []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        body = inspector.snapshot()
        t1 = time.perf_counter_ns()
        socket.reset()
        inspector._outbox.post({wire.KIND: wire.SNAPSHOT}, body)
        t2 = time.perf_counter_ns()
        build.append((t1 - t0) / 1e6)
        send.append((t2 - t1) / 1e6)
        sizes.append(socket.bytes)
        own.append(len(body))
        # The same, the way it happens: the browser's sync request answered through the comm.
        t0 = time.perf_counter_ns()
        inspector._on_msg(inspector, {wire.KIND: wire.SYNC}, [])
        whole.append((time.perf_counter_ns() - t0) / 1e6)
        # And where the widget is displayed: the snapshot put in the synced trait.
        t0 = time.perf_counter_ns()
        inspector.publish_snapshot()
        trait.append((time.perf_counter_ns() - t0) / 1e6)
    inspector.close()
    return {
        "nodes": n_nodes,
        "wire_bytes": statistics.median(sizes),
        "own_json_bytes": statistics.median(own),
        "build_ms": measure.summary(build),
        "send_ms": measure.summary(send),
        "sync_request_ms": measure.summary(whole),
        "display_trait_ms": measure.summary(trait),
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
            outputs = [
                nbformat.v4.new_output("display_data", data=o.data, metadata=o.metadata or {})
                for o in cap.outputs[-1:]
            ]
            cells.append(nbformat.v4.new_code_cell(source, outputs=outputs, execution_count=done + 1))
            done += 1
        nb = nbformat.v4.new_notebook(cells=list(cells))
        out[f"ipynb_bytes_{target}_turns"] = len(nbformat.writes(nb).encode())
    empty = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(f"%%chat graph\nchange one node ({i})") for i in range(done)]
    )
    out["ipynb_bytes_without_outputs"] = len(nbformat.writes(empty).encode())
    first, last = counts[0], counts[-1]
    out["bytes_per_turn"] = (out[f"ipynb_bytes_{last}_turns"] - out[f"ipynb_bytes_{first}_turns"]) / (
        last - first
    )
    out["output_bytes_per_turn"] = (
        out[f"ipynb_bytes_{last}_turns"] - out["ipynb_bytes_without_outputs"]
    ) / last
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", default=None, help="write the figures here")
    p.add_argument(
        "--skip-notebook", action="store_true", help="leave out the notebook growth (IPython shell)"
    )
    args = p.parse_args(argv)
    socket = kernel_stub.install("%%chat graph\nchange one node")
    result: dict = {"loadavg_start": measure.loadavg()}
    result["traffic"] = [traffic(socket, states.NESTED_NODES), traffic(socket, 10)]
    result["first_message"] = [first_message(socket, states.NESTED_NODES), first_message(socket, 10)]
    for row in result["traffic"]:
        for label in ("loop", "cell"):
            t = row[label]
            print(
                f"inspector, {row['nodes']:>6} nodes (state {row['state_json_bytes'] / 1e3:.0f} kB), {label}: "
                f"{t['wire_bytes_per_turn']['mean']:.0f} B/turn on the wire in {t['wire_messages_per_turn']['mean']:.2f} messages "
                f"(own JSON {t['own_json_bytes_per_turn_mean']:.0f} B; state_changed item {t['state_changed_item_bytes_median']:.0f} B; "
                f"{t['rows_per_turn']:.2f} turns sent as rows); inspector + kernel send {t['inspector_ms_per_turn']['mean']:.3f} ms/turn "
                f"(median {t['inspector_ms_per_turn']['median']:.3f}, max {t['inspector_ms_per_turn']['max']:.3f}; "
                f"garbage collector pauses in it, left out: {t['collector_ms_in_it']:.1f} ms in all; "
                f"after-cell refresh {t['after_cell_ms']['median']:.3f} ms); widget open {row['widget_open']['bytes']} B",
                flush=True,
            )
    for row in result["first_message"]:
        print(
            f"first message, {row['nodes']:>6} nodes: {row['wire_bytes'] / 1e3:.1f} kB on the wire "
            f"(own JSON {row['own_json_bytes'] / 1e3:.1f} kB); build {row['build_ms']['median']:.2f} ms "
            f"[{row['build_ms']['min']:.2f}–{row['build_ms']['max']:.2f}], send {row['send_ms']['median']:.2f} ms "
            f"[{row['send_ms']['min']:.2f}–{row['send_ms']['max']:.2f}]; sync request answered in "
            f"{row['sync_request_ms']['median']:.2f} ms; display (trait) {row['display_trait_ms']['median']:.2f} ms",
            flush=True,
        )
    if not args.skip_notebook:
        result["notebook"] = nb = notebook_growth()
        print(
            f"notebook: {nb['bytes_per_turn']:.0f} B per %%chat turn "
            f"(1 turn {nb['ipynb_bytes_1_turns']} B, 10 turns {nb['ipynb_bytes_10_turns']} B, 50 turns {nb['ipynb_bytes_50_turns']} B)"
        )
    result["loadavg_end"] = measure.loadavg()
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
