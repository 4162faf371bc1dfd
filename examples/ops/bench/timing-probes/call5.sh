[ -d /tmp/site/duckdb ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot:$PWD/tests/gpu PYTHONUNBUFFERED=1
for i in 1 2 3; do echo "== process $i"; timeout 150 python3 examples/ops/bench/timing-probes/hostbound.py 2>&1 | grep -v Warning; done | tee $OUT/hostbound.txt
echo "== process 4, with 6 busy CPU processes beside it"
for k in 1 2 3 4 5 6; do timeout 60 python3 -c "while True: pass" & done
timeout 150 python3 examples/ops/bench/timing-probes/hostbound.py 2>&1 | grep -v Warning | tee -a $OUT/hostbound.txt
kill %1 %2 %3 %4 %5 %6 2>/dev/null; nproc
