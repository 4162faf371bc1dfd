# Stop 23, device call 1: the variants probe in two processes, then the GPU exchange and timer tests.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
for i in 1 2; do echo "== process $i"; timeout 200 python3 examples/ops/bench/groupnorm-one-launch-probes/stop23_variants.py 2>&1 | grep -v Warning; done | tee $OUT/stop23_variants-h200.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_exchange_gpu.py tests/gpu/test_timing_gpu.py 2>&1 | tail -15 | tee $OUT/tests.txt
