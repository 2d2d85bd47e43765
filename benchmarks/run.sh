#!/usr/bin/env bash
# One interleaved run of agentnb's benchmarks next to the anchor frameworks, then ratios.
#
#   ANCHORS=/tmp/anchors REPS=5 benchmarks/run.sh
#
# ANCHORS is a scratch copy of the anchor harness with its venvs built (its setup.sh). The
# anchors are never imported here: they run in their own venvs; this script only reads their
# result files. Output: $OUT (default /tmp/agentnb-bench) holds every JSON result and log.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
PY="${PY:-$ROOT/.venv/bin/python}"
ANCHORS="${ANCHORS:-/tmp/anchors}"
REPS="${REPS:-5}"
OUT="${OUT:-/tmp/agentnb-bench}"
[ -x "$ANCHORS/venv/bin/python" ] || { echo "no anchor venv at $ANCHORS/venv: copy the anchor harness there and run its setup.sh" >&2; exit 2; }
mkdir -p "$OUT/results" "$OUT/logs"
rm -f "$OUT"/results/*.json "$OUT"/logs/*.log "$ANCHORS"/results/*.json
export OPENAI_API_KEY=sk-fake AGNO_TELEMETRY=false HAYSTACK_TELEMETRY_ENABLED=False ANCHORBENCH_NETGUARD=patch
{ date -u; uname -srm; nproc; "$PY" -VV; cat /proc/loadavg; } > "$OUT/results/machine.txt"
"$ANCHORS/venv/bin/pip" freeze > "$OUT/results/freeze_anchors.txt" 2>/dev/null
"$PY" -m pip freeze > "$OUT/results/freeze_agentnb.txt" 2>/dev/null

# Per-turn overhead: one process per framework and mode per repetition, interleaved, so the
# (shared) machine's load hits all of them alike.
for r in $(seq 1 "$REPS"); do
  echo "=== repetition $r/$REPS (load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$PY" "$HERE/bench_turns.py" --mode recording --tag "_r$r" --out "$OUT/results" | tee -a "$OUT/logs/turns.log"
  "$ANCHORS/venv/bin/python" "$ANCHORS/bench_agno.py" --mode sync --tag "_r$r" | tee -a "$OUT/logs/turns.log"
  "$PY" "$HERE/bench_turns.py" --mode inspector --tag "_r$r" --out "$OUT/results" | tee -a "$OUT/logs/turns.log"
  "$ANCHORS/venv/bin/python" "$ANCHORS/bench_haystack.py" --mode sync --tag "_r$r" | tee -a "$OUT/logs/turns.log"
  "$ANCHORS/venv/bin/python" "$ANCHORS/bench_pydantic_ai.py" --mode sync --tag "_r$r" | tee -a "$OUT/logs/turns.log"
done

# Import time (agentnb in this venv; the anchors' own import script in theirs)
echo "=== import time (load $(cut -d' ' -f1-3 /proc/loadavg))"
"$PY" "$HERE/bench_import.py" 9 --json "$OUT/results/import_agentnb.json" | tee "$OUT/logs/import.log"
ANCHORBENCH_IMPORT_RUNS=5 "$ANCHORS/venv/bin/python" "$ANCHORS/bench_import.py" | tee -a "$OUT/logs/import.log"

# Sessions: agentnb (one-key autosave at 10/100/1,000 turns; whole save/load) and the anchors' stores
echo "=== sessions (load $(cut -d' ' -f1-3 /proc/loadavg))"
"$PY" "$HERE/bench_sessions.py" | tee "$OUT/logs/sessions.log"
"$ANCHORS/venv/bin/python" "$ANCHORS/bench_sessions_agno.py" | tee -a "$OUT/logs/sessions.log"
"$ANCHORS/venv_agentscope1/bin/python" "$ANCHORS/bench_sessions_agentscope.py" 2>/dev/null | tee -a "$OUT/logs/sessions.log"

# Inspector traffic and notebook growth
echo "=== inspector (load $(cut -d' ' -f1-3 /proc/loadavg))"
"$PY" "$HERE/bench_inspector.py" --json "$OUT/results/inspector.json" | tee "$OUT/logs/inspector.log"

cat /proc/loadavg >> "$OUT/results/machine.txt"
"$PY" "$HERE/report.py" "$OUT/results" "$ANCHORS/results" | tee "$OUT/report.md"
