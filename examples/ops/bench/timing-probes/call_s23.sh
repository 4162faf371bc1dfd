# Stop 23: the compute ceiling, plain vs masked.
export PYTHONPATH=$PWD/bot PYTHONUNBUFFERED=1
timeout 120 python3 examples/ops/bench/timing-probes/ceiling.py 2>&1 | grep -v Warning | tee $OUT/ceiling-h200.txt
