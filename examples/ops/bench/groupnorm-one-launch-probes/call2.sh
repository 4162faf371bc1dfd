#!/usr/bin/env bash
set -uo pipefail
[ -d /tmp/site/duckdb ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
timeout 300 python3 examples/ops/bench/groupnorm-one-launch-probes/variants_wait.py 2>&1 | tee $OUT/gn2.txt
cat > /tmp/ce2.py <<'PY'
from gene_sweep import sweep
print("== cross_entropy", flush=True)
sweep("examples/ops/cross_entropy.py", [{}, {"row.BLOCK_N": 4096}, {"row.BLOCK_N": 4096, "row.num_warps": 16}, {"row.BLOCK_N": 1024, "row.num_warps": 4},
      {"row.num_warps": 4}, {"row.BLOCK_M": 2}, {"row.BLOCK_M": 2, "row.num_warps": 16}, {"row.BLOCK_N": 8192, "row.num_warps": 16}], lambda xs: xs[0].nbytes)
PY
timeout 150 python3 /tmp/ce2.py 2>&1 | tee $OUT/ce2.txt
