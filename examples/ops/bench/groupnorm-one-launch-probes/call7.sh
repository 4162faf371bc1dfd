#!/usr/bin/env bash
[ -d /tmp/site/duckdb ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1 FOUNDRY_EXPERIENCE_DB=/tmp/foundry-gpu.duckdb
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_timing_gpu.py tests/gpu/test_evaluator_gpu.py 2>&1 | tail -4 | tee $OUT/tests.txt
d=examples/ops
SKIP_INSTALL=1 BENCH_OPS="$d/groupnorm.py $d/cross_entropy.py $d/softmax.py $d/layernorm.py" PARALLEL=2 BENCH_S=200 OP_S=60 BUDGET=4 bash tests/gpu/gpu_pass.sh bench 2>&1 | tail -12
for i in 2 3; do
  timeout 100 python3 -m foundry bench $d/groupnorm.py --budget 4 --time-limit 60 --policy strict --no-experience --out $OUT/groupnorm-repeat-$i.json > /tmp/rep$i.log 2>&1
  grep "groupnorm.py::Model |" /tmp/rep$i.log | tail -1
done
