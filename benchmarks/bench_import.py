"""Import time of agentnb, measured from outside (run on demand, not in the test suite).

* ``python -c "import agentnb"``: wall time of the whole child process (interpreter start-up
  included; the ``python -c pass`` row is the start-up alone), median of R runs after one untimed
  run; also ``-X importtime`` (sum of top-level cumulative import times, start-up excluded) and
  whether a heavy library (openai, pandas, IPython, ipywidgets) was imported.
* ``%load_ext agentnb`` in a real IPython shell (``InteractiveShell``), timed in the child
  around ``run_line_magic("load_ext", "agentnb")`` (IPython itself already imported).

    python benchmarks/bench_import.py [R] [--json results/import.json]
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

PY = sys.executable
ROOT = str(Path(__file__).resolve().parents[1])
HEAVY = ("openai", "pandas", "IPython", "ipywidgets", "anywidget", "httpx")


def wall(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([PY, "-c", code], check=True, cwd=ROOT, capture_output=True)
    return time.perf_counter() - t0


def importtime(code: str) -> tuple[float, int]:
    p = subprocess.run(
        [PY, "-X", "importtime", "-c", code], check=True, cwd=ROOT, capture_output=True, text=True
    )
    total, count = 0, 0
    for line in p.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S.*)$", line)
        if m:
            count += 1
            if len(m.group(3)) == 1:
                total += int(m.group(2))
    return total / 1e6, count


LOAD_EXT = (
    "import time\n"
    "from IPython.core.interactiveshell import InteractiveShell\n"
    "shell = InteractiveShell.instance()\n"
    "t0 = time.perf_counter()\n"
    "shell.run_line_magic('load_ext', 'agentnb')\n"
    "print(time.perf_counter() - t0)\n"
)


def main(argv: list[str] | None = None) -> dict:
    argv = list(sys.argv[1:] if argv is None else argv)
    out_path = None
    if "--json" in argv:
        i = argv.index("--json")
        out_path = argv[i + 1]
        del argv[i : i + 2]
    runs = int(argv[0]) if argv else 9
    out: dict = {"runs": runs, "python": PY, "rows": []}
    for label, code in (("python -c pass", "pass"), ("import agentnb", "import agentnb")):
        wall(code)
        times = [wall(code) for _ in range(runs)]
        it, modules = importtime(code)
        row = {
            "label": label,
            "median_ms": statistics.median(times) * 1000,
            "min_ms": min(times) * 1000,
            "importtime_ms": it * 1000,
            "modules": modules,
        }
        out["rows"].append(row)
        print(
            f"{label:26} median {row['median_ms']:7.1f} ms  min {row['min_ms']:7.1f} ms  "
            f"(-X importtime {row['importtime_ms']:6.1f} ms, {modules} modules)",
            flush=True,
        )
    probe = f"import sys, agentnb; print([m for m in {HEAVY!r} if m in sys.modules])"
    heavy = subprocess.run(
        [PY, "-c", probe], check=True, cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    out["heavy_imported_by_import_agentnb"] = heavy
    print(f"heavy libraries imported by `import agentnb`: {heavy}")
    subprocess.run([PY, "-c", LOAD_EXT], check=True, cwd=ROOT, capture_output=True)
    loads = [
        float(
            subprocess.run(
                [PY, "-c", LOAD_EXT], check=True, cwd=ROOT, capture_output=True, text=True
            ).stdout.split()[-1]
        )
        for _ in range(runs)
    ]
    out["load_ext_median_ms"] = statistics.median(loads) * 1000
    out["load_ext_min_ms"] = min(loads) * 1000
    print(
        f"{'%load_ext agentnb':26} median {out['load_ext_median_ms']:7.1f} ms  min {out['load_ext_min_ms']:7.1f} ms "
        "(in a running IPython shell)"
    )
    if out_path:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        Path(out_path).write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
