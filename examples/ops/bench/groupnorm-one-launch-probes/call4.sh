#!/usr/bin/env bash
[ -d /tmp/site/duckdb ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
for i in 1 2 3; do echo "== process $i"; timeout 60 python3 examples/ops/bench/groupnorm-one-launch-probes/processes.py 8192/4 16384/8 8192/8; done 2>&1 | tee $OUT/var.txt
for i in 4 5; do echo "== process $i (reversed)"; timeout 60 python3 examples/ops/bench/groupnorm-one-launch-probes/processes.py 8192/8 16384/8 8192/4; done 2>&1 | tee -a $OUT/var.txt
