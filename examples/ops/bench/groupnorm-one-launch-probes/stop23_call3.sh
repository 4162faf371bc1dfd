# Stop 23, device call 3: the wait and statistics variants at 5 programs per SM, then the adversarial suite on CUDA.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
timeout 170 python3 examples/ops/bench/groupnorm-one-launch-probes/stop23_polls.py 2>&1 | grep -v Warning | tee $OUT/stop23_polls-h200.txt
CHEATS_S=390 SKIP_INSTALL=1 bash tests/gpu/gpu_pass.sh cheats | tail -25
