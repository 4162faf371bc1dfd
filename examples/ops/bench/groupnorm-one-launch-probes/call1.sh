#!/usr/bin/env bash
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/gpu.txt
timeout 200 python3 examples/ops/bench/groupnorm-one-launch-probes/variants.py 2>&1 | tee $OUT/gn.txt
cat > /tmp/ce.py <<'PY'
import sys
from gene_sweep import sweep
W = {"row.max_single_n": 32768}
for op in ("examples/ops/cross_entropy.py", "examples/ops/argmax_rows.py"):
    print("==", op, flush=True)
    sweep(op, [{}, {**W, "row.num_warps": 32}, {**W, "row.num_warps": 16}, {**W, "row.num_warps": 8}], lambda xs: xs[0].nbytes)
PY
timeout 150 python3 /tmp/ce.py 2>&1 | tee $OUT/ce.txt
SKIP_INSTALL=1 EVAL_S=240 bash tests/gpu/gpu_pass.sh evaluator 2>&1 | tail -40
cp $OUT/evaluator.log $OUT/evaluator.log 2>/dev/null; true
