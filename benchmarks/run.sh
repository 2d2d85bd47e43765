#!/usr/bin/env bash
# One interleaved run of agentnb's benchmarks next to the anchor frameworks, then one report.
#
#   ANCHORS=/tmp/anchors REPS=3 benchmarks/run.sh
#
# ANCHORS is a scratch copy of the anchor harness with its venvs built (its setup.sh). agentnb
# never imports the other frameworks: their scripts (the harness's own, and benchmarks/peers/)
# run in the harness's venvs and write JSON files that report.py reads. Output: $OUT (default
# /tmp/agentnb-bench) holds every JSON result, every log and report.md. Nothing here asserts a
# time; run it on demand, never from `make test`.
#
# Knobs: REPS (per-turn repetitions, each a fresh process per framework and case), FIRST_PROCS
# (fresh processes per first-call variant), SESSION_TURNS (agentnb and AgentScope autosave
# series), AGNO_SESSION_TURNS (Agno's series: it stores the whole state with every run, about
# 1 MB a turn here, so 1,000 turns take ~10 min, ~1 GB of disk and several GB of RAM to load; default 300),
# PARTS (which parts to run).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
PY="${PY:-$ROOT/.venv/bin/python}"
ANCHORS="${ANCHORS:-/tmp/anchors}"
REPS="${REPS:-3}"
FIRST_PROCS="${FIRST_PROCS:-5}"
SESSION_TURNS="${SESSION_TURNS:-1000}"
AGNO_SESSION_TURNS="${AGNO_SESSION_TURNS:-300}"
PARTS="${PARTS:-turns scale import first sessions inspector}"
OUT="${OUT:-/tmp/agentnb-bench}"
AS_PY="$ANCHORS/venv/bin/python"
AS1_PY="$ANCHORS/venv_agentscope1/bin/python"
[ -x "$AS_PY" ] || { echo "no anchor venv at $ANCHORS/venv: copy the anchor harness there and run its setup.sh" >&2; exit 2; }
mkdir -p "$OUT/results" "$OUT/logs"
rm -f "$OUT"/results/*.json "$OUT"/logs/*.log "$ANCHORS"/results/*.json
export ANCHORS OPENAI_API_KEY=sk-fake AGNO_TELEMETRY=false HAYSTACK_TELEMETRY_ENABLED=False ANCHORBENCH_NETGUARD=patch
{ date -u; uname -srm; nproc; "$PY" -VV; cat /proc/loadavg; } > "$OUT/results/machine.txt"
"$AS_PY" -m pip freeze > "$OUT/results/freeze_anchors.txt" 2>/dev/null
"$PY" -m pip freeze > "$OUT/results/freeze_agentnb.txt" 2>/dev/null
R="$OUT/results"
has() { case " $PARTS " in *" $1 "*) return 0;; *) return 1;; esac; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

for r in $(seq 1 "$REPS"); do
  echo "=== repetition $r/$REPS (load $(load))"
  if has turns; then
    # The fast path: tiny state, K=1 and K=10, every framework (one process each, interleaved).
    "$PY" "$HERE/bench_turns.py" --mode recording --tag "_r$r" --out "$R" | tee -a "$OUT/logs/turns.log"
    "$AS_PY" "$ANCHORS/bench_agno.py" --mode sync --tag "_r$r" | tee -a "$OUT/logs/turns.log"
    "$PY" "$HERE/bench_turns.py" --mode inspector --tag "_r$r" --out "$R" | tee -a "$OUT/logs/turns.log"
    "$PY" "$HERE/bench_turns.py" --mode inspector-cell --tag "_r$r" --out "$R" | tee -a "$OUT/logs/turns.log"
    "$PY" "$HERE/bench_turns.py" --mode inspector-nokernel --tag "_r$r" --out "$R" | tee -a "$OUT/logs/turns.log"
    "$AS_PY" "$ANCHORS/bench_haystack.py" --mode sync --tag "_r$r" | tee -a "$OUT/logs/turns.log"
    "$AS_PY" "$ANCHORS/bench_pydantic_ai.py" --mode sync --tag "_r$r" | tee -a "$OUT/logs/turns.log"
  fi
  if has scale; then
    # Large states, K=1: agentnb and Agno alternate, one process per case.
    for case in tiny nested_one nested_untouched flat_one; do
      "$PY" "$HERE/bench_scale.py" --case "$case" --mode recording --tag "_r$r" --out "$R" | tee -a "$OUT/logs/scale.log"
      "$AS_PY" "$HERE/peers/agno_turns.py" --case "$case" --tag "_r$r" --out "$R" | tee -a "$OUT/logs/scale.log"
    done
    for case in tiny nested_one; do
      "$PY" "$HERE/bench_scale.py" --case "$case" --mode inspector --tag "_r$r" --out "$R" | tee -a "$OUT/logs/scale.log"
    done
    # Agno keeping its runs (InMemoryDb), for the memory a kept history costs: slow, fewer turns.
    for case in nested_one flat_one; do
      "$AS_PY" "$HERE/peers/agno_turns.py" --case "$case" --db memory --n 15 --warmup 3 --mem-turns 10 --tag "_r$r" --out "$R" | tee -a "$OUT/logs/scale.log"
    done
  fi
done

if has import; then
  echo "=== import time (load $(load))"
  "$PY" "$HERE/bench_import.py" 9 --json "$R/import_agentnb.json" | tee "$OUT/logs/import.log"
  ANCHORBENCH_IMPORT_RUNS=5 "$AS_PY" "$ANCHORS/bench_import.py" | tee -a "$OUT/logs/import.log"
fi

if has first; then
  echo "=== first tool call in a fresh process (load $(load))"
  "$PY" "$HERE/bench_first_call.py" --procs "$FIRST_PROCS" --json "$R/first_call_agentnb.json" | tee "$OUT/logs/first_call.log"
  "$AS_PY" "$HERE/peers/agno_first_call.py" --procs "$FIRST_PROCS" --out "$R" | tee -a "$OUT/logs/first_call.log"
fi

if has sessions; then
  echo "=== sessions (load $(load))"
  "$PY" "$HERE/bench_sessions.py" --turns "$SESSION_TURNS" --json "$R/sessions_agentnb.json" | tee "$OUT/logs/sessions.log"
  "$AS_PY" "$HERE/peers/agno_sessions.py" --turns "$AGNO_SESSION_TURNS" --out "$R" | tee -a "$OUT/logs/sessions.log"
  if [ -x "$AS1_PY" ]; then
    "$AS1_PY" "$HERE/peers/agentscope_sessions.py" --turns "$SESSION_TURNS" --out "$R" 2>>"$OUT/logs/agentscope.stderr.log" | tee -a "$OUT/logs/sessions.log"
    "$AS1_PY" "$ANCHORS/bench_sessions_agentscope.py" 2>>"$OUT/logs/agentscope.stderr.log" | tee -a "$OUT/logs/sessions.log"
  fi
  "$AS_PY" "$ANCHORS/bench_sessions_agno.py" | tee -a "$OUT/logs/sessions.log"
fi

if has inspector; then
  echo "=== inspector (load $(load))"
  "$PY" "$HERE/bench_inspector.py" --json "$R/inspector.json" | tee "$OUT/logs/inspector.log"
fi

cat /proc/loadavg >> "$R/machine.txt"
"$PY" "$HERE/report.py" "$R" "$ANCHORS/results" | tee "$OUT/report.md"
