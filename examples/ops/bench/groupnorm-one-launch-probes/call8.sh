#!/usr/bin/env bash
export PYTHONPATH=/tmp/site:$PWD/bot PYTHONUNBUFFERED=1
for i in 1 2 3 4 5 6; do timeout 30 python3 examples/ops/bench/groupnorm-one-launch-probes/processes_no_wait.py; done 2>&1 | tee $OUT/wait.txt
