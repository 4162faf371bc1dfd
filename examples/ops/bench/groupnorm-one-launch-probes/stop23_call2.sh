# Stop 23, device call 2: the occupancy sweep, then foundry bench over group norm and the 4 examples stop 22's
# bench did not reach (template writer, 3 final runs), two bench processes.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
timeout 240 python3 examples/ops/bench/groupnorm-one-launch-probes/stop23_occupancy.py 2>&1 | grep -v Warning | tee $OUT/stop23_occupancy-h200.txt
BENCH_OPS="examples/ops/groupnorm.py examples/ops/min_dim.py examples/ops/row_sum.py examples/ops/smooth_l1_loss.py examples/ops/swish_residual.py" \
  PARALLEL=2 OP_S=60 BUDGET=4 BENCH_S=320 SKIP_INSTALL=1 bash tests/gpu/gpu_pass.sh bench
