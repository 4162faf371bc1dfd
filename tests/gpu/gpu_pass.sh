#!/usr/bin/env bash
# One GPU verification pass, for the lent H200 (torch 2.11, triton 3.6, no pydantic/duckdb/openai/PyGithub).
# Fetch the wheels first, here:  bash ../shared/tools/gpu-wheels.sh .whl   (.whl is git-ignored; carry it)
# Then, in one device call:      bash tests/gpu/gpu_pass.sh PART...   with PART = probe | cheats | faults |
# evaluator | bench | sweep | warm (probe: a short search with the evaluator's stage timings; BENCH_OPS:
# a glob of operators); or ray1, then ray2 in the next call (Ray over two transfers: see tests/gpu/ray_fetch.sh).
# Any other PART (e.g. none) only installs the wheels, for a command after it: tests/gpu/gene_sweep.py OP GENES...
# Each of cheats, bench, warm fits one 10-minute call; results land in $OUT, which brings back at most 8
# files (scratch goes to /tmp: bench leaves 3 files there, warm 2, probe 2, sweep 1, gpu.txt 1). A bench over
# more operators than one call allows: run subsets (BENCH_OPS) in several calls, then join the JSON reports here with
# tools/merge_bench.py ALL.json part*.json --md TABLE.md (each report is written after every
# operator, so a call cut short keeps what it measured).
set -uo pipefail
out=${OUT:-/tmp/foundry-gpu}
scratch=$(mktemp -d /tmp/foundry-pass-XXXX)
mkdir -p "$out"
case "${1:-}" in
  ray1)  # first half of the Ray wheel (tests/gpu/ray_fetch.sh): kept on the machine for the next call
    mkdir -p /tmp/ray-parts && cp .whl-ray/part1/piece.* /tmp/ray-parts/ && ls -la /tmp/ray-parts; exit 0 ;;
  ray2)  # second half: assemble, check, install Ray, its dependencies and pydantic; then the executor bench
    cp .whl-ray/part2/piece.* /tmp/ray-parts/ || exit 1
    wheel=/tmp/ray-parts/$(cat .whl-ray/part2/wheel-name)
    cat /tmp/ray-parts/piece.* > "$wheel"
    echo "$(cat .whl-ray/part2/wheel-sha256)  $wheel" | sha256sum -c - || exit 1
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$wheel" .whl-ray/part2/deps/*.whl \
      || exit 1
    export PYTHONPATH=/tmp/site:$PWD/bot PYTHONUNBUFFERED=1
    timeout ${RAY_S:-500} python3 tools/executor_bench.py ${RAY_OP:-examples/ops/softmax.py} \
      --budget ${BUDGET:-8} --gpus 1 --out "$out/executors-gpu.json" 2>&1 | tee "$out/executors-gpu.log" | tail -20
    exit 0 ;;
esac
if [ -z "${SKIP_INSTALL:-}" ]; then  # SKIP_INSTALL=1: a pass running beside another that installed them
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD/bot PYTHONUNBUFFERED=1 FOUNDRY_EXPERIENCE_DB=/tmp/foundry-gpu.duckdb
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$out/gpu.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$out/gpu.txt"
for part in "${@:-cheats}"; do
case "$part" in
  probe)   # throughput: where a candidate's time goes (debug log of each evaluation's stages)
    timeout ${PROBE_S:-150} python3 -m foundry -v optimize ${PROBE_OP:-examples/ops/softmax.py} --budget ${BUDGET:-16} \
      --no-experience --out "$scratch/probe" --json > "$out/probe.json" 2> "$out/probe.log"
    grep -E "evaluated in|prepared" "$out/probe.log" | tail -30 ;;
  evaluator)  # the evaluator's GPU scheduling and sandbox, plus the cheats named in $CHEATS_K (a pytest -k expression)
    timeout ${EVAL_S:-300} python3 -m pytest -v -p no:cacheprovider tests/gpu/test_evaluator_gpu.py \
      tests/gpu/test_landlock_gpu.py tests/gpu/test_cheats_gpu.py \
      -k "evaluator_gpu or landlock_gpu or ${CHEATS_K:-gpu_only}" 2>&1 | tee "$out/evaluator.log" \
      | grep -E "PASSED|FAILED|SKIPPED|ERROR|passed|failed" ;;
  faults)
    timeout ${FAULTS_S:-300} python3 -m pytest -q -p no:cacheprovider tests/gpu/test_cheats_gpu.py -k "fault" \
      2>&1 | tee "$out/faults.log" ;;
  cheats)  # the adversarial suite on CUDA, honest candidates and the GPU-only timing cheats first
    timeout ${CHEATS_S:-560} python3 -m pytest -q -p no:cacheprovider tests/gpu/test_cheats_gpu.py \
      -k "honest or gpu_only or patching or cheat_is_rejected" 2>&1 | tee "$out/cheats.log" ;;
  bench)   # foundry bench over the example operators, template writer, side by side with eager and compile.
    # PARALLEL=N: N bench processes over disjoint shares of the operators, at once on the one GPU (their
    # evaluators share the GPU's lock file: correctness runs overlap, timing runs stay alone); joined after.
    mapfile -t ops < <(printf '%s\n' ${BENCH_OPS:-examples/ops/*.py})  # in the order given
    pol=${POLICY:-strict}
    n=${PARALLEL:-1}
    for ((k = 0; k < n; k++)); do
      share=()
      for ((i = k; i < ${#ops[@]}; i += n)); do share+=("${ops[i]}"); done
      timeout ${BENCH_S:-570} python3 -m foundry ${VERBOSE:+-v} bench "${share[@]}" --budget ${BUDGET:-4} \
        --time-limit ${OP_S:-40} --policy "$pol" --no-experience ${WORKERS:+--workers $WORKERS} \
        --out "$scratch/bench-$pol-$k.json" > "$scratch/bench-$pol-$k.log" 2>&1 &
    done
    wait
    for ((k = 0; k < n; k++)); do echo "== process $k"; cat "$scratch/bench-$pol-$k.log"; done > "$out/bench-$pol.log"
    python3 tools/merge_bench.py "$out/bench-$pol.json" "$scratch"/bench-"$pol"-[0-9]*.json \
      --md "$out/bench-$pol.md" 2>&1 | tail -40 ;;
  sweep)   # split-row variants of group norm (row.split x BLOCK_N x warps) against eager and torch.compile
    timeout ${SWEEP_S:-300} python3 tests/gpu/split_sweep.py examples/ops/groupnorm.py > "$out/sweep.txt" 2>&1
    tail -45 "$out/sweep.txt" ;;
  warm)    # experience library: cold vs warm search of the same operator
    timeout ${WARM_S:-560} python3 tests/experience/bench_warm_start.py ${WARM_OP:-examples/ops/softmax.py} \
      --budget ${WARM_BUDGET:-12} --time-limit ${WARM_LIMIT:-200} --out "$scratch/warm" 2>&1 | tee "$out/warm.log"
    cp "$scratch/warm/warm_start.json" "$out/" || tail -c 3000 "$scratch"/warm/*/stderr.log ;;
esac
done
