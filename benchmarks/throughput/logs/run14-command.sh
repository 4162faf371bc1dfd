# Stop 23, run 14: throughput with the masked timer, 3 final runs and row.occupancy (softmax, then group norm; 4 in flight).
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/bot PYTHONUNBUFFERED=1 FOUNDRY_EXPERIENCE_DB=/tmp/foundry-gpu.duckdb
timeout 150 python3 -m foundry -v optimize examples/ops/softmax.py --budget 40 --time-limit 100 --no-experience \
  --out /tmp/t14s --json > $OUT/14-softmax.json 2> $OUT/14-masked-softmax-w4.log
timeout 150 python3 -m foundry -v optimize examples/ops/groupnorm.py --budget 32 --time-limit 90 --no-experience \
  --out /tmp/t14g --json > $OUT/14-groupnorm.json 2> $OUT/14-masked-groupnorm-w4.log
python3 tools/throughput_table.py $OUT/14-masked-*.log | tail -30
