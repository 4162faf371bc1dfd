[ -d /tmp/site/duckdb ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,clocks_event_reasons.active --format=csv -lms 100 > $OUT/smi.csv 2>&1 &
smi=$!
for i in 1 2 3 4 5; do echo "== process $i $(date +%s.%N)"; timeout 100 python3 examples/ops/bench/timing-probes/placement.py; done 2>&1 | tee $OUT/placement2.txt
kill $smi
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER > $OUT/smi-q.txt 2>&1
head -3 $OUT/smi.csv; wc -l $OUT/smi.csv
