[ -d /tmp/site/duckdb ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
for i in 1 2 3 4; do echo "== process $i"; timeout 100 python3 examples/ops/bench/timing-probes/placement.py; done 2>&1 | tee $OUT/placement.txt
