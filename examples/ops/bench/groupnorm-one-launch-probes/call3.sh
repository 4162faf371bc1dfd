#!/usr/bin/env bash
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
git log --oneline -1 > $OUT/head.txt 2>/dev/null || true
cat > /tmp/ce3.py <<'PY'
from gene_sweep import sweep
print("== cross_entropy (picked logit loaded directly)", flush=True)
sweep("examples/ops/cross_entropy.py", [{}, {"row.BLOCK_N": 1024, "row.num_warps": 4}, {"row.BLOCK_N": 1024, "row.num_warps": 8},
      {"row.num_warps": 4}, {"row.BLOCK_N": 4096}, {"row.max_single_n": 32768, "row.num_warps": 32}], lambda xs: xs[0].nbytes)
print("== groupnorm one launch (chunked fallback)", flush=True)
sweep("examples/ops/groupnorm.py", [{"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": b, "row.num_warps": w} for b, w in ((8192, 4), (8192, 8), (16384, 8))], lambda xs: 2 * xs[0].nbytes)
PY
timeout 100 python3 /tmp/ce3.py 2>&1 | tee $OUT/sweep3.txt
d=examples/ops
OPS="$d/groupnorm.py $d/cross_entropy.py $d/argmax_rows.py $d/frobenius_scale.py $d/softmax.py $d/log_softmax.py $d/layernorm.py $d/rmsnorm.py $d/l2_normalize.py $d/logsumexp.py $d/batchnorm_relu.py $d/bias_gelu_scale.py $d/swish_residual.py $d/min_dim.py $d/mean_dim1.py $d/row_sum.py $d/mse_loss.py $d/smooth_l1_loss.py $d/linear_bias_relu.py $d/linear_gelu_3d.py $d/batched_matmul.py $d/matmul_scaled_residual.py"
SKIP_INSTALL=1 BENCH_OPS="$OPS" PARALLEL=2 BENCH_S=${BENCH_S:-440} OP_S=60 BUDGET=4 bash tests/gpu/gpu_pass.sh bench 2>&1 | tail -40
