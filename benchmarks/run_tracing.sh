#!/usr/bin/env bash
# A turn with tracing off / on / content in agentnb, and the same turn in pydantic-ai with
# instrument= off / on / no content, interleaved, one process per framework, mode and repetition.
#   PAI_PYTHON=/tmp/pai/bin/python REPS=3 OUT=/tmp/agentnb-tracing benchmarks/run_tracing.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/agentnb-tracing}; REPS=${REPS:-3}; N1=${N1:-100}; N10=${N10:-20}
mkdir -p "$OUT"
for rep in $(seq 1 "$REPS"); do
  for mode in off on content; do
    .venv/bin/python benchmarks/bench_tracing.py --mode "$mode" --n1 "$N1" --n10 "$N10" --tag "_$rep" --out "$OUT"
  done
  if [ -n "${PAI_PYTHON:-}" ]; then
    for mode in off on nocontent; do
      "$PAI_PYTHON" benchmarks/peers/pydantic_ai_tracing.py --mode "$mode" --n1 "$N1" --n10 "$N10" --tag "_$rep" --out "$OUT"
    done
  fi
done
