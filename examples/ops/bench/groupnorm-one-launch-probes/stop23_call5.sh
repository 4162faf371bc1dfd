# Stop 23, device call 5: foundry bench (template writer, 3 final runs) with row.occupancy and the 2-per-thread
# fallback: group norm beside a convolution in two processes, then group norm again in a third.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
BENCH_OPS="examples/ops/groupnorm.py examples/ops/conv_2d_bias_relu.py" PARALLEL=2 OP_S=60 BUDGET=4 BENCH_S=230 \
  SKIP_INSTALL=1 bash tests/gpu/gpu_pass.sh bench | tail -8
mkdir -p $OUT/a && mv $OUT/bench-strict.* $OUT/a/
BENCH_OPS="examples/ops/groupnorm.py" OP_S=60 BUDGET=4 BENCH_S=150 SKIP_INSTALL=1 bash tests/gpu/gpu_pass.sh bench | tail -5
mkdir -p $OUT/b && mv $OUT/bench-strict.* $OUT/b/
