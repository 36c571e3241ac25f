#!/usr/bin/env bash
# End-to-end test of the Python logger: pure-Python unit tests, then (where
# torch is importable) a tiny character-GPT pair trained briefly on a
# license text, logged to JSON lines (or parquet with pyarrow), converted
# with 'simulate import-log', checked with 'simulate validate-log' and
# replayed, in chain steps and in tree steps (--tree). PYTHON picks the
# interpreter (default python3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m unittest "$here/test_logger.py"
if ! "$py" -c 'import torch' 2>/dev/null; then
  echo "logger test: torch is not importable by $py; skipped the end-to-end run"
  exit 0
fi
(cd "$root" && go build -o "$tmp/simulate" ./cmd/simulate)
fmt=jsonl
"$py" -c 'import pyarrow' 2>/dev/null && fmt=parquet
"$py" "$here/logger.py" --tiny --train-steps 150 --prompts 6 --steps 25 --gamma 3 \
  --temperature 0.8 --top-k 20 --seed 3 --format "$fmt" --out "$tmp/run.$fmt"
log="$tmp/run.$fmt"
if [ "$fmt" = jsonl ]; then
  "$tmp/simulate" import-log --in "$tmp/run.jsonl" --out "$tmp/run.parquet" --source "tiny-gpt pair" --seed 3
  log="$tmp/run.parquet"
fi
"$tmp/simulate" validate-log "$log"
"$tmp/simulate" replay --log "$log" --algo token,greedy,exact-match --seed 1 --fail-on-violation
# tree steps (schema version 2): EAGLE-1-style trees of 2 children per node
# to depth 3, verified by recursive rejection sampling without replacement;
# replay judges the logged run and fails (exit 3) if it is violated.
"$py" "$here/logger.py" --tiny --train-steps 150 --prompts 6 --steps 25 --gamma 3 --tree 2 \
  --temperature 0.8 --top-k 20 --seed 3 --format "$fmt" --out "$tmp/tree.$fmt"
tree="$tmp/tree.$fmt"
if [ "$fmt" = jsonl ]; then
  "$tmp/simulate" import-log --in "$tmp/tree.jsonl" --out "$tmp/tree.parquet" --source "tiny-gpt pair" --seed 3
  tree="$tmp/tree.parquet"
fi
"$tmp/simulate" validate-log "$tree"
"$tmp/simulate" replay --log "$tree" --seed 1 --fail-on-violation
echo "logger test: passed ($fmt, chain and tree)"
