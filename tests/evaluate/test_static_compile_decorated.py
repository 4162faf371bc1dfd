"""Static sm_90 compile of decorated kernels (evaluate/static_compile.kernel_facts): @triton.heuristics and
@triton.autotune kernels compile (every config of an autotuned one) instead of being refused, and a config that
cannot fit sm_90 is one the autotuner would skip, not a failure, unless no config fits. Compiled in a child
without TRITON_INTERPRET, as the evaluator's static compile child runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

KERNELS = """
import triton
import triton.language as tl


@triton.jit
def _tile_body(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
@triton.jit
def _heuristic_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=8, num_stages=2)],
    key=["n"],
)
@triton.jit
def _tuned_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    _tile_body(x_ptr, y_ptr, n, BLOCK)


@triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})
@triton.jit
def _tuned_heuristic_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    else:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(
    configs=[triton.Config({"BM": 16, "BK": 16}, num_stages=2), triton.Config({"BM": 128, "BK": 64}, num_stages=5)],
    key=["n"],
)
@triton.jit
def _partly_too_big_kernel(a_ptr, c_ptr, n, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BM), dtype=tl.float32)
    for k in range(0, n, BK):
        a = tl.load(a_ptr + rm[:, None] * n + (k + rk)[None, :])
        b = tl.load(a_ptr + (k + rk)[:, None] * n + rm[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BM + rm[None, :], acc)
"""

# What the worker's launch recorder saw: the first launch's arguments, heuristics' and one config's values among
# the keywords.
LAUNCHES = {
    "_heuristic_kernel": [["tensor:torch.float32", "tensor:torch.float32", 37], {"BLOCK": 64}],
    "_tuned_kernel": [["tensor:torch.float32", "tensor:torch.float32", 1000], {"BLOCK": 128, "num_warps": 4}],
    "_tuned_heuristic_kernel": [["tensor:torch.float32", "tensor:torch.float32", 1000], {"BLOCK": 64, "EVEN": False}],
    "_partly_too_big_kernel": [["tensor:torch.float32", "tensor:torch.float32", 1024], {"BM": 16, "BK": 16}],
}

RUN = """
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
spec = importlib.util.spec_from_file_location("decorated", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from foundry.evaluate.static_compile import kernel_facts
launches = json.loads(sys.argv[3])
print(json.dumps({name: kernel_facts(name, getattr(module, name), tuple(a), k) for name, (a, k) in launches.items()}))
"""


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    where = tmp_path_factory.mktemp("decorated")
    (where / "decorated.py").write_text(KERNELS)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(where / "cache")
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(ROOT / "bot"), str(where / "decorated.py"), json.dumps(LAUNCHES)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_heuristics_kernel_compiles_with_the_values_it_was_launched_with(facts):
    (fact,) = facts["_heuristic_kernel"]
    assert "error" not in fact, fact
    assert fact["target"] == "sm_90 (static compile)" and fact["registers"] > 0


def test_every_config_of_an_autotuned_kernel_compiles_with_its_own_options(facts):
    tuned = facts["_tuned_kernel"]
    assert [f["name"] for f in tuned] == [
        "_tuned_kernel[BLOCK=128, num_warps=4, num_stages=3, num_ctas=1]",
        "_tuned_kernel[BLOCK=256, num_warps=8, num_stages=2, num_ctas=1]",
    ]
    assert [f["num_warps"] for f in tuned] == [4, 8]
    assert all("error" not in f and f["registers"] > 0 for f in tuned)


def test_autotune_over_heuristics_compiles(facts):
    (fact,) = facts["_tuned_heuristic_kernel"]
    assert "error" not in fact and fact["target"] == "sm_90 (static compile)"


def test_a_config_too_big_for_sm90_is_reported_as_skipped_not_failed(facts):
    fitting, skipped = facts["_partly_too_big_kernel"]
    assert fitting["name"].startswith("_partly_too_big_kernel[BM=16") and "error" not in fitting
    assert skipped["name"].startswith("_partly_too_big_kernel[BM=128")
    assert "skipped by autotune" in skipped["target"] and "error" not in skipped and "shared_bytes" not in skipped


def test_an_autotuned_candidate_is_verified_with_every_config_compiled_for_sm90():
    from foundry.core.records import Candidate
    from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
    from foundry.spec.loader import load_operator

    cheats = ROOT / "tests" / "cheats"
    evaluator = CandidateEvaluator(
        load_operator(str(cheats / "operators" / "softmax_rows.py")),
        config=EvaluatorConfig(trials=1, static_compile=True),
    )
    source = (cheats / "candidates" / "facts_ok_autotune.py").read_text()
    verdict = evaluator.evaluate(Candidate(id="autotuned", source=source))
    assert verdict.verified, verdict.diagnoses
    names = [k.name for k in verdict.kernels]
    assert [n.split(", ")[0] for n in names] == [
        "_softmax_fwd_kernel[BLOCK_SIZE=64",
        "_softmax_fwd_kernel[BLOCK_SIZE=128",
        "_softmax_fwd_kernel[BLOCK_SIZE=1024",
    ]
    assert all(k.target == "sm_90 (static compile)" and k.registers for k in verdict.kernels)
