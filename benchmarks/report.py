"""Summarise one ``run.sh`` run: the issue-15 table (agentnb, Agno, AgentScope, target, ratio)
and the detail tables, all from the JSON files of that run.

    python benchmarks/report.py OUT/results ANCHORS/results

Per-turn figures are medians over processes of each process's median; the range is the min–max
of those per-process medians. Ratios are agentnb / the other framework, ratio of the medians
[median of the paired ratios, each agentnb process against the other framework's process of the
same repetition]. A ratio below 1 means agentnb is cheaper.
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

FAST_ROWS = (
    ("agentnb, recording + inspector (kernel send path)", "mine", "agentnb_inspector_r*.json"),
    (
        "agentnb, recording + inspector, a cell per turn (kernel send path)",
        "mine",
        "agentnb_inspector-cell_r*.json",
    ),
    ("agentnb, recording + inspector (no kernel)", "mine", "agentnb_inspector-nokernel_r*.json"),
    ("agentnb, recording", "mine", "agentnb_recording_r*.json"),
    ("agno (sync)", "anchors", "agno_sync_r*.json"),
    ("haystack (sync)", "anchors", "haystack_sync_r*.json"),
    ("pydantic-ai (sync)", "anchors", "pydantic_ai_sync_r*.json"),
)


def rep_of(path: str) -> str:
    return path.rsplit("_r", 1)[-1].split(".")[0]


def runs(folder: str, pattern: str) -> dict[str, dict[str, Any]]:
    """{repetition: result} for the files matching ``pattern``."""
    return {rep_of(p): json.load(open(p)) for p in sorted(glob.glob(os.path.join(folder, pattern)))}


def one(folder: str, name: str) -> dict[str, Any] | None:
    path = os.path.join(folder, name)
    return json.load(open(path)) if os.path.exists(path) else None


def spread(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def fmt(values: list[float], unit: str = "ms", digits: int = 2) -> str:
    """``median [min–max]`` of per-process values."""
    if not values:
        return "–"
    m, lo, hi = spread(values)
    if len(values) == 1:
        return f"{m:.{digits}f} {unit}"
    return f"{m:.{digits}f} {unit} [{lo:.{digits}f}–{hi:.{digits}f}]"


def kib(values: list[float]) -> str:
    return fmt([v / 1024 for v in values], "KiB", 1)


def ratio(mine: dict[str, dict[str, Any]], theirs: dict[str, dict[str, Any]], get: Any) -> str:
    """Ratio of the medians [median of the paired ratios]."""
    if not mine or not theirs:
        return "–"
    a = statistics.median(get(r) for r in mine.values())
    b = statistics.median(get(r) for r in theirs.values())
    paired = [get(mine[k]) / get(theirs[k]) for k in mine if k in theirs and get(theirs[k])]
    text = f"{a / b:.2f}×" if b else "–"
    return f"{text} [{statistics.median(paired):.2f}×]" if len(paired) > 1 else text


def framework_ms(r: dict[str, Any]) -> float:
    return r["series"]["framework_ms"]["median"]


def cpu_ms(r: dict[str, Any]) -> float:
    return r["series"]["cpu_ms"]["median"]


def retained(r: dict[str, Any]) -> float:
    return r["memory"]["retained_bytes_per_turn"]


class Report:
    def __init__(self, mine: str, anchors: str) -> None:
        self.mine, self.anchors = mine, anchors
        self.scale = {
            (fw, mode, case): runs(mine, f"scale_{fw}_{mode}_{case}_r*.json")
            for fw, modes in (("agentnb", ("recording", "inspector")), ("agno", ("none", "memory")))
            for mode in modes
            for case in ("tiny", "nested_one", "nested_untouched", "flat_one")
        }
        self.sessions = one(mine, "sessions_agentnb.json")
        self.agno_sessions = one(mine, "sessions_agno_scale.json")
        self.as_sessions = one(mine, "sessions_agentscope_scale.json")
        self.first = one(mine, "first_call_agentnb.json")
        self.agno_first = one(mine, "first_call_agno.json")
        self.inspector = one(mine, "inspector.json")
        self.fast = {
            label: runs(mine if where == "mine" else anchors, pattern) for label, where, pattern in FAST_ROWS
        }

    # -- the issue's table --------------------------------------------------------------------

    def issue_table(self) -> list[str]:
        lines = [
            "| case | agentnb today | Agno | AgentScope | target (issue 15) | ratio |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        lines += self.turn_rows()
        lines += self.session_rows()
        lines += self.first_call_row()
        lines += self.inspector_rows()
        return lines

    def turn_rows(self) -> list[str]:
        out = []
        s = self.scale
        a, g, gm = (
            s[("agentnb", "recording", "nested_one")],
            s[("agno", "none", "nested_one")],
            s[("agno", "memory", "nested_one")],
        )
        if a and g:
            out.append(
                f"| K=1 turn, one node changed in a 10,000-node nested state | "
                f"{fmt([framework_ms(r) for r in a.values()])} (CPU {fmt([cpu_ms(r) for r in a.values()])}); "
                f"retained {kib([retained(r) for r in a.values()])} per turn, history kept | "
                f"{fmt([framework_ms(r) for r in g.values()])} (CPU {fmt([cpu_ms(r) for r in g.values()])}); retained "
                f"{kib([retained(r) for r in g.values()])} per turn without a db, "
                f"{kib([retained(r) for r in gm.values()]) if gm else '–'} with its runs kept (InMemoryDb; "
                f"{fmt([framework_ms(r) for r in gm.values()], digits=0) if gm else '–'} per turn) | – | "
                f"≤ 1 ms; retained ≤ 10 KB | time {ratio(a, g, framework_ms)}, CPU {ratio(a, g, cpu_ms)}; "
                f"memory vs Agno keeping its runs {ratio(a, gm, retained) if gm else '–'} |"
            )
        a, g = s[("agentnb", "recording", "nested_untouched")], s[("agno", "none", "nested_untouched")]
        t = s[("agentnb", "recording", "tiny")]
        if a and g:
            out.append(
                f"| K=1 turn, 10,000-node state left untouched | {fmt([framework_ms(r) for r in a.values()])} "
                f"(CPU {fmt([cpu_ms(r) for r in a.values()])}; tiny state {fmt([framework_ms(r) for r in t.values()], digits=3)}) | "
                f"{fmt([framework_ms(r) for r in g.values()])} (CPU {fmt([cpu_ms(r) for r in g.values()])}) | – | "
                f"≤ 0.3 ms, flat in state size | time {ratio(a, g, framework_ms)}, CPU {ratio(a, g, cpu_ms)} |"
            )
        a, g, gm = (
            s[("agentnb", "recording", "flat_one")],
            s[("agno", "none", "flat_one")],
            s[("agno", "memory", "flat_one")],
        )
        if a and g:
            out.append(
                f"| 8,500-key 1 MB state, one key changed | retained {kib([retained(r) for r in a.values()])} per turn; "
                f"{fmt([framework_ms(r) for r in a.values()])} per turn (CPU {fmt([cpu_ms(r) for r in a.values()])}) | "
                f"retained {kib([retained(r) for r in g.values()])} without a db, "
                f"{kib([retained(r) for r in gm.values()]) if gm else '–'} with its runs kept; "
                f"{fmt([framework_ms(r) for r in g.values()])} per turn without a db | – | retained ≤ 10 KB | "
                f"memory vs Agno keeping its runs {ratio(a, gm, retained) if gm else '–'}; time {ratio(a, g, framework_ms)} |"
            )
        return out

    def session_rows(self) -> list[str]:
        out = []
        mine, agno, ascope = self.sessions, self.agno_sessions, self.as_sessions
        if mine:
            by = {r["backend"]: r for r in mine["autosave"]}

            def loads(r: dict[str, Any] | None) -> str:
                if not r:
                    return "–"
                return "; ".join(
                    f"{load['turns']:,} turns {load['wall_ms']['median']:.0f} ms "
                    f"[{load['wall_ms']['min']:.0f}–{load['wall_ms']['max']:.0f}] "
                    f"(CPU {load['cpu_ms']['median']:.0f})"
                    for load in r["loads"]
                )

            mine_text = "; ".join(f"{k.upper()}: {loads(v)}" for k, v in by.items())
            last = {k: v["loads"][-1]["wall_ms"]["median"] for k, v in by.items() if v["loads"]}
            as_last = (
                ascope["autosave"]["loads"][-1]["wall_ms"]["median"]
                if ascope and ascope["autosave"]["loads"]
                else None
            )
            r_text = (
                ", ".join(f"{k.upper()} {v / as_last:.1f}×" for k, v in last.items()) + " vs AgentScope"
                if as_last
                else "–"
            )
            out.append(
                f"| load a session with a 1 MB state, vs history length | {mine_text} | "
                f"SqliteDb: {loads(agno['autosave']) if agno else '–'} | JSONSession: {loads(ascope['autosave']) if ascope else '–'} | "
                f"≤ 150 ms, flat in history length | {r_text} |"
            )

            def saves(r: dict[str, Any]) -> str:
                s = r["save_ms"]
                text = f"save median {s['median']:.2f} / p99 {s['p99']:.1f} / max {s['max']:.0f} ms"
                if "compactions" in r:
                    text += f", {r['compactions']} compactions ({', '.join(f'{c:.0f}' for c in r['compaction_ms'])} ms)"
                return (
                    text
                    + f"; whole turn median {r['turn_ms']['median']:.1f} / p99 {r['turn_ms']['p99']:.1f} / max {r['turn_ms']['max']:.0f} ms"
                )

            ag = agno["autosave"] if agno else None
            asc = ascope["autosave"] if ascope else None
            out.append(
                f"| autosave over {by[next(iter(by))]['turns']:,} turns of a 1 MB state | "
                + "; ".join(f"{k.upper()}: {saves(v)}" for k, v in by.items())
                + f" | SqliteDb, {ag['turns'] if ag else '–'} turns: {saves(ag) if ag else '–'} | "
                f"{asc['turns'] if asc else '–'} turns, save only: "
                + (
                    f"median {asc['save_ms']['median']:.1f} / p99 {asc['save_ms']['p99']:.1f} / max {asc['save_ms']['max']:.0f} ms"
                    if asc
                    else "–"
                )
                + " | p99 ≤ 20 ms; compaction off the turn's path | save p99: "
                + ", ".join(
                    f"{k.upper()} {v['save_ms']['p99'] / ag['save_ms']['p99']:.2f}× Agno"
                    for k, v in by.items()
                    if ag
                )
                + (
                    ", "
                    + ", ".join(
                        f"{k.upper()} {v['save_ms']['p99'] / asc['save_ms']['p99']:.2f}× AgentScope"
                        for k, v in by.items()
                    )
                    if asc
                    else ""
                )
                + " |"
            )
            out.append(
                "| one-key save, 1 MB state (wall / CPU / fsync, medians over the series) | "
                + "; ".join(
                    f"{k.upper()}: {v['save_ms']['median']:.2f} / {v['save_cpu_ms']['median']:.2f} / "
                    f"{v['fsync_ms']['median']:.2f} ms"
                    + (" (SQLite syncs in C: wall − CPU)" if k == "sqlite" else "")
                    for k, v in by.items()
                )
                + f" | {ag['save_ms']['median']:.0f} / {ag['save_cpu_ms']['median']:.0f} ms (wall / CPU, session + run rows)"
                if ag
                else " | –"
            )
            out[-1] += (
                f" | {asc['save_ms']['median']:.1f} / {asc['save_cpu_ms']['median']:.1f} ms (no fsync)"
                if asc
                else " | –"
            )
            out[-1] += (
                " | ≤ 2 ms CPU; fsync policy documented | CPU: "
                + ", ".join(
                    f"{k.upper()} {v['save_cpu_ms']['median'] / ag['save_cpu_ms']['median']:.3f}× Agno"
                    for k, v in by.items()
                    if ag
                )
                + (
                    ", "
                    + ", ".join(
                        f"{k.upper()} {v['save_cpu_ms']['median'] / asc['save_cpu_ms']['median']:.2f}× AgentScope"
                        for k, v in by.items()
                    )
                    if asc
                    else ""
                )
                + " |"
            )
        return out

    def first_call_row(self) -> list[str]:
        if not self.first:
            return []
        v = self.first["variants"]
        g = self.agno_first["variants"] if self.agno_first else {}

        def cell(d: dict[str, Any]) -> str:
            return f"first {fmt(d['first_ms'], digits=1)}, later {statistics.median(d['later_ms']):.2f} ms"

        mine = "; ".join(f"{k}: {cell(d)}" for k, d in v.items())
        theirs = "; ".join(f"{k}: {cell(d)}" for k, d in g.items()) or "–"
        rt = (
            ", ".join(
                f"{k} {statistics.median(v[k]['first_ms']) / statistics.median(g[k]['first_ms']):.2f}×"
                for k in v
                if k in g
            )
            or "–"
        )
        return [
            f"| first tool call in a fresh process | {mine} | {theirs} | – | ≤ 50 ms | first call: {rt} |"
        ]

    def inspector_rows(self) -> list[str]:
        out = []
        s = self.scale
        ins, rec, g = (
            s[("agentnb", "inspector", "tiny")],
            s[("agentnb", "recording", "tiny")],
            s[("agno", "none", "tiny")],
        )
        fast_agno = self.fast.get("agno (sync)")
        fast = {
            label: self.fast.get(f"agentnb, recording + inspector{suffix} (kernel send path)")
            for label, suffix in (("loop", ""), ("cell", ", a cell per turn"))
        }
        traffic = {t["nodes"]: t for t in self.inspector["traffic"]} if self.inspector else {}
        if ins and g:
            msgs = [r["inspector"]["wire_messages_per_turn"] for r in ins.values()]
            wire = [r["inspector"]["wire_bytes_per_turn"] for r in ins.values()]
            own = [r["inspector"]["own_json_bytes_per_turn"] for r in ins.values()]
            big = traffic.get(10_000)
            k1 = lambda r: r["turns"]["K1"]["median_ms"]  # noqa: E731
            fast_ratio = (
                "; ".join(
                    f"{label} {ratio(f, fast_agno, k1)}" for label, f in fast.items() if f and fast_agno
                )
                or "–"
            )
            out.append(
                f"| inspector messages per K=1 turn | {statistics.median(msgs):.2f} message(s), {statistics.median(wire):,.0f} B on the wire "
                f"({statistics.median(own):,.0f} B of our JSON, encoded once) in a loop of turns; one more (the snapshot trait) after each cell"
                + (
                    f"; 10,000-node state: {big['loop']['wire_messages_per_turn']['mean']:.2f} messages, {big['loop']['wire_bytes_per_turn']['mean']:,.0f} B"
                    if big
                    else ""
                )
                + f"; turn with the inspector {fmt([framework_ms(r) for r in ins.values()], digits=3)} vs "
                f"{fmt([framework_ms(r) for r in rec.values()], digits=3)} without | "
                f"{fmt([framework_ms(r) for r in g.values()], digits=3)} per turn (no inspector) | – | "
                f"≤ 2 per turn; ≤ 0.5× Agno with the inspector on | inspector on vs Agno: {ratio(ins, g, framework_ms)} "
                f"(fast-path run, wall incl. fake models: {fast_ratio}) |"
            )
        if self.inspector:
            first = {f["nodes"]: f for f in self.inspector["first_message"]}.get(10_000)
            if first:
                out.append(
                    f"| inspector's first message for a 10,000-node state | {first['wire_bytes'] / 1e3:,.1f} kB on the wire "
                    f"({first['own_json_bytes'] / 1e3:,.1f} kB of our JSON); build {first['build_ms']['median']:.2f} ms "
                    f"[{first['build_ms']['min']:.2f}–{first['build_ms']['max']:.2f}] + send (the kernel's part) "
                    f"{first['send_ms']['median']:.2f} ms [{first['send_ms']['min']:.2f}–{first['send_ms']['max']:.2f}] | "
                    f"no inspector | – | ≤ 50 KB, ≤ 5 ms | – |"
                )
        return out

    # -- detail tables ------------------------------------------------------------------------

    def fast_table(self) -> list[str]:
        lines = [
            "| framework | procs | K=1 median | K=1 p95 | K=1 CPU | K=1 range | K=10 median | K=10 p95 | K=10 CPU | K=10 range |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for label, rs in self.fast.items():
            if not rs:
                continue
            cells = []
            for k in ("K1", "K10"):
                meds = [r["turns"][k]["median_ms"] for r in rs.values()]
                cells += [
                    f"{statistics.median(meds):.3f}",
                    f"{statistics.median(r['turns'][k]['p95_ms'] for r in rs.values()):.3f}",
                    f"{statistics.median(r['turns'][k]['cpu_median_ms'] for r in rs.values()):.3f}",
                    f"{min(meds):.3f}–{max(meds):.3f}",
                ]
            lines.append(f"| {label} | {len(rs)} | " + " | ".join(cells) + " |")
        base = self.fast.get("agno (sync)")
        if base:
            lines += [
                "",
                "| vs agno (sync), same run | K=1 | K=10 | K=1 CPU | K=10 CPU |",
                "|---|---|---|---|---|",
            ]
            for label, rs in self.fast.items():
                if rs and label != "agno (sync)":
                    cells = [
                        ratio(rs, base, lambda r, k=k, f=f: r["turns"][k][f])
                        for f in ("median_ms", "cpu_median_ms")
                        for k in ("K1", "K10")
                    ]
                    lines.append(f"| {label} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")
        return lines

    def scale_table(self) -> list[str]:
        lines = [
            "| case | framework | procs | state | wall | fake model | framework (wall − model) | CPU | retained per turn |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for case in ("tiny", "nested_one", "nested_untouched", "flat_one"):
            for key, label in (
                (("agentnb", "recording"), "agentnb, recording"),
                (("agentnb", "inspector"), "agentnb, + inspector"),
                (("agno", "none"), "agno, no db"),
                (("agno", "memory"), "agno, InMemoryDb"),
            ):
                rs = self.scale[(*key, case)]
                if not rs:
                    continue
                first = next(iter(rs.values()))
                lines.append(
                    f"| {case} | {label} | {len(rs)} | {first['state_json_bytes'] / 1e3:,.0f} kB | "
                    f"{fmt([r['series']['wall_ms']['median'] for r in rs.values()], digits=3)} | "
                    f"{fmt([r['series']['model_ms']['median'] for r in rs.values()], digits=3)} | "
                    f"{fmt([framework_ms(r) for r in rs.values()], digits=3)} | {fmt([cpu_ms(r) for r in rs.values()], digits=3)} | "
                    f"{kib([retained(r) for r in rs.values()])} |"
                )
        return lines

    def import_table(self) -> list[str]:
        data = one(self.mine, "import_agentnb.json")
        if not data:
            return []
        lines = ["| what | median | min | -X importtime | modules |", "|---|---|---|---|---|"]
        for row in data["rows"]:
            lines.append(
                f"| agentnb venv: {row['label']} | {row['median_ms']:.0f} | {row['min_ms']:.0f} | {row['importtime_ms']:.0f} | {row['modules']} |"
            )
        lines.append(
            f"| agentnb: %load_ext agentnb (in a running IPython shell) | {data['load_ext_median_ms']:.0f} | {data['load_ext_min_ms']:.0f} | – | – |"
        )
        for path in sorted(glob.glob(os.path.join(self.anchors, "import_times*.json"))):
            for case in json.loads(Path(path).read_text())["cases"]:
                lines.append(
                    f"| anchors venv: {case['label']} | {case['median_s'] * 1000:.0f} | {min(case['wall_s']) * 1000:.0f} "
                    f"| {case['importtime_s'] * 1000:.0f} | {case['modules_imported']} |"
                )
        lines.append(
            f"\nheavy libraries imported by `import agentnb`: {data['heavy_imported_by_import_agentnb']}"
        )
        return lines

    def print(self) -> None:
        print("## Issue 15, as measured (one run)\n")
        print("\n".join(self.issue_table()))
        print("\n## Fast path: tiny state, K=1 / K=10 (ms per turn, wall including the fake models)\n")
        print("\n".join(self.fast_table()))
        print(
            "\n## K=1 turns against the state's size (ms; median over processes [min–max of per-process medians])\n"
        )
        print("\n".join(self.scale_table()))
        if self.inspector:
            print("\n## Inspector (every message through ipykernel's send path)\n")
            print(
                "| state | turns | wire messages / turn (mean) | wire bytes / turn (mean) | our JSON / turn (mean) | state change item | inspector + kernel per turn (mean) | widget open | first message (wire) | build | send | sync answered |"
            )
            print("|---|---|---|---|---|---|---|---|---|---|---|---|")
            first = {f["nodes"]: f for f in self.inspector["first_message"]}
            for t in self.inspector["traffic"]:
                f = first[t["nodes"]]
                for label, how in (("loop", "in a loop"), ("cell", "a cell each")):
                    r = t[label]
                    print(
                        f"| {t['nodes']:,} nodes ({t['state_json_bytes'] / 1e3:,.0f} kB) | {how} | {r['wire_messages_per_turn']['mean']:.2f} | "
                        f"{r['wire_bytes_per_turn']['mean']:,.0f} | {r['own_json_bytes_per_turn_mean']:,.0f} | {r['state_changed_item_bytes_median']:,.0f} B | "
                        f"{r['inspector_ms_per_turn']['mean']:.3f} ms (median {r['inspector_ms_per_turn']['median']:.3f}) | "
                        f"{t['widget_open']['messages']} msgs, {t['widget_open']['bytes']:,} B | {f['wire_bytes']:,.0f} B | "
                        f"{f['build_ms']['median']:.2f} ms | {f['send_ms']['median']:.2f} ms | {f['sync_request_ms']['median']:.2f} ms |"
                    )
            nb = self.inspector.get("notebook")
            if nb:
                print(f"\nNotebook growth: {nb['bytes_per_turn']:,.0f} B per %%chat turn.")
        imports = self.import_table()
        if imports:
            print("\n## Import time (ms, wall of `python -c`, start-up included)\n")
            print("\n".join(imports))
        for name, data in (("agentnb", self.first), ("agno", self.agno_first)):
            if data:
                print(
                    f"\n{name}, modules the first run imported: "
                    + "; ".join(
                        f"{k}: {len(v['imported_by_first_run'])}" for k, v in data["variants"].items()
                    )
                )
        print()


def main() -> None:
    Report(sys.argv[1], sys.argv[2]).print()


if __name__ == "__main__":
    main()
