# Stop 23, device call 4: the tile-statistics variants at 5 programs per SM.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
timeout 200 python3 examples/ops/bench/groupnorm-one-launch-probes/stop23_stats.py 2>&1 | grep -v Warning | tee $OUT/stop23_stats-h200.txt
