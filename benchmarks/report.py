"""Summarise one ``run.sh`` run: per-turn medians over processes and ratios to the anchors.

    python benchmarks/report.py OUT/results ANCHORS/results
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys

ROWS = (
    ("agentnb (recording + inspector)", "mine", "agentnb_inspector_r*.json"),
    ("agentnb (recording, no inspector)", "mine", "agentnb_recording_r*.json"),
    ("agno (sync)", "anchors", "agno_sync_r*.json"),
    ("haystack (sync)", "anchors", "haystack_sync_r*.json"),
    ("pydantic-ai (sync)", "anchors", "pydantic_ai_sync_r*.json"),
)


def rep(path: str) -> str:
    return path.rsplit("_r", 1)[-1].split(".")[0]


def main() -> None:
    mine, anchors = sys.argv[1], sys.argv[2]
    folders = {"mine": mine, "anchors": anchors}
    table = {}
    per_rep: dict[str, dict[str, dict]] = {}
    for label, where, pattern in ROWS:
        paths = [p for p in sorted(glob.glob(os.path.join(folders[where], pattern))) if "turns" in json.load(open(p))]
        runs = [json.load(open(p)) for p in paths]
        if not runs:
            continue
        per_rep[label] = {rep(p): r for p, r in zip(paths, runs)}
        row = {}
        for k in ("K1", "K10"):
            meds = [r["turns"][k]["median_ms"] for r in runs]
            row[k] = {
                "median": statistics.median(meds),
                "p95": statistics.median(r["turns"][k]["p95_ms"] for r in runs),
                "cpu": statistics.median(r["turns"][k]["cpu_median_ms"] for r in runs),
                "range": (min(meds), max(meds)),
                "procs": len(runs),
            }
        table[label] = row
    print("## Per-turn overhead (ms; median over processes of each process's median / p95; CPU = process CPU time per turn)\n")
    print("| framework | procs | K=1 median | K=1 p95 | K=1 CPU | K=1 range | K=10 median | K=10 p95 | K=10 CPU | K=10 range |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, row in table.items():
        a, b = row["K1"], row["K10"]
        print(f"| {label} | {a['procs']} | {a['median']:.3f} | {a['p95']:.3f} | {a['cpu']:.3f} | {a['range'][0]:.3f}–{a['range'][1]:.3f} "
              f"| {b['median']:.3f} | {b['p95']:.3f} | {b['cpu']:.3f} | {b['range'][0]:.3f}–{b['range'][1]:.3f} |")
    base = "agno (sync)"
    if base in table:
        print(f"\n## Ratios to {base}, same run\n")
        print("ratio of medians over processes [median of the per-repetition ratios, each agentnb process against the agno process next to it]\n")
        print("| framework | K=1 | K=10 | K=1 CPU | K=10 CPU |")
        print("|---|---|---|---|---|")
        for label, row in table.items():
            if label == base:
                continue
            cells = []
            for k, field in (("K1", "median"), ("K10", "median"), ("K1", "cpu"), ("K10", "cpu")):
                ratio = row[k][field] / table[base][k][field]
                key = "median_ms" if field == "median" else "cpu_median_ms"
                paired = [per_rep[label][r]["turns"][k][key] / per_rep[base][r]["turns"][k][key]
                          for r in per_rep[label] if r in per_rep[base]]
                cells.append(f"{ratio:.2f}× [{statistics.median(paired):.2f}×]" if paired else f"{ratio:.2f}×")
            print(f"| {label} | " + " | ".join(cells) + " |")
    imp = os.path.join(mine, "import_agentnb.json")
    anchor_imports = sorted(glob.glob(os.path.join(anchors, "import_times*.json")))
    if os.path.exists(imp):
        data = json.load(open(imp))
        print("\n## Import time (ms, wall of `python -c`, start-up included)\n")
        print("| what | median | min | -X importtime | modules |")
        print("|---|---|---|---|---|")
        for row in data["rows"]:
            print(f"| agentnb venv: {row['label']} | {row['median_ms']:.0f} | {row['min_ms']:.0f} | {row['importtime_ms']:.0f} | {row['modules']} |")
        print(f"| agentnb: %load_ext agentnb (in a running IPython shell) | {data['load_ext_median_ms']:.0f} | {data['load_ext_min_ms']:.0f} | – | – |")
        for path in anchor_imports:
            for case in json.load(open(path))["cases"]:
                print(f"| anchors venv: {case['label']} | {case['median_s'] * 1000:.0f} | {min(case['wall_s']) * 1000:.0f} "
                      f"| {case['importtime_s'] * 1000:.0f} | {case['modules_imported']} |")
        print(f"\nheavy libraries imported by `import agentnb`: {data['heavy_imported_by_import_agentnb']}")
    for name in ("sessions_agno.json", "sessions_agentscope.json"):
        path = os.path.join(anchors, name)
        if os.path.exists(path):
            print(f"\n{name}: see logs/sessions.log for the figures")
    print()


if __name__ == "__main__":
    main()
