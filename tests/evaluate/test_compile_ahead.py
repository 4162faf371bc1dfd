"""Compiling ahead and the worker's phases. On a GPU the worker compiles a candidate's kernels before it
asks for the device (its forward on meta tensors, every Triton launch turned into Triton's warmup), and
the evaluator holds the device only while a stage uses it. The compile itself needs a GPU target
(tests/gpu/test_compile_ahead_gpu.py); here: the dry pass's inputs, launches and fallbacks, and the order
in which a real worker on the CPU goes through its phases."""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import triton
import triton.language as tl
from foundry.evaluate import evaluator as evaluator_module
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.evaluate.isolation import Child
from foundry.evaluate.runtime_guard import LaunchRecorder
from foundry.evaluate.worker import compile_ahead
from foundry.spec.loader import load_operator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cheats"))
from suite import HONEST, OPERATORS, candidate  # noqa: E402


class Kernel:
    __name__ = "scale_kernel"


def test_a_dry_launch_compiles_only_and_is_not_counted():
    seen = []

    def original(fn_self, *args, grid, warmup, **kwargs):
        seen.append(warmup)
        return "compiled"

    recorder = LaunchRecorder()
    run = recorder.wrap(original)
    recorder.dry = True
    assert run(Kernel(), torch.zeros(2), grid=(1,), warmup=False) == "compiled"
    assert seen == [True] and recorder.total == 0 and not recorder.signatures
    recorder.dry = False
    run(Kernel(), torch.zeros(2), grid=(1,), warmup=False)
    assert seen == [True, False] and recorder.total == 1


@pytest.fixture
def candidate_module(monkeypatch):
    module = types.ModuleType("foundry_candidate")
    monkeypatch.setitem(sys.modules, "foundry_candidate", module)
    return module


def test_the_dry_pass_runs_forward_once_per_trial_shape_on_meta_tensors(candidate_module):
    recorder = LaunchRecorder()
    calls = []

    class ModelNew(torch.nn.Module):
        def __init__(self, width):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(width))

        def forward(self, x, scale):
            calls.append((x.device.type, tuple(x.shape), x.stride(), x.dtype, scale, self.weight.device.type))
            assert recorder.dry  # every launch in here only compiles
            return x * self.weight * scale

    candidate_module.ModelNew = ModelNew
    wide = torch.randn(5, 3)
    data = {
        "init": [3],
        "trials": [
            [torch.randn(4, 3), 2.0],
            [torch.randn(4, 3), 2.0],  # the same shape again: not run twice
            [wide[:4], 2.0],  # the same shape, other strides (a view): its own specialization
            [torch.randn(7, 3).t().contiguous().t(), 2.0],
        ],
    }
    assert compile_ahead(ModelNew, data, recorder, torch) is None
    assert not recorder.dry
    assert calls == [
        ("meta", (4, 3), (3, 1), torch.float32, 2.0, "meta"),
        ("meta", (7, 3), (1, 7), torch.float32, 2.0, "meta"),
    ]


def test_a_dry_pass_that_raises_is_no_verdict(candidate_module):
    class ModelNew(torch.nn.Module):
        def forward(self, x):
            return torch.tensor([x.sum().item()])  # data-dependent: impossible on meta tensors

    candidate_module.ModelNew = ModelNew
    recorder = LaunchRecorder()
    why = compile_ahead(ModelNew, {"init": [], "trials": [[torch.randn(3)]]}, recorder, torch)
    assert why is not None and not recorder.dry


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def tuned_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_autotuned_candidates_are_not_compiled_ahead(candidate_module):
    ran = []

    class ModelNew(torch.nn.Module):
        def forward(self, x):
            ran.append(x)
            return x

    candidate_module.ModelNew = ModelNew
    candidate_module.tuned_kernel = tuned_kernel  # tuning would time warmups: left to the real calls
    assert compile_ahead(ModelNew, {"init": [], "trials": [[torch.randn(3)]]}, LaunchRecorder(), torch) == "autotuned"
    assert ran == []


def test_the_parents_turns_do_not_count_against_the_candidates_timeout():
    child = SimpleNamespace(started=100.0)
    Child.parent_turn(child, lambda: time.sleep(0.05))  # e.g. waiting for a timing run to finish
    assert child.started >= 100.05
    assert Child.parent_turn(child, None) is None


def test_a_worker_goes_ready_run_ran_then_reports(monkeypatch):
    """Ready (loaded, and on a GPU compiled) before it touches the device; ran when its correctness
    calls are done; then its correctness message. Each is a step of the parent's."""
    steps = []
    real = evaluator_module.run_child

    def watched(jobdir, **kwargs):
        for hook in ("ready", "ran", "decide"):
            original = kwargs[hook]

            def step(*args, _hook=hook, _original=original):
                steps.append(_hook)
                return _original(*args)

            kwargs[hook] = step
        return real(jobdir, **kwargs)

    monkeypatch.setattr(evaluator_module, "run_child", watched)
    operator = load_operator(str(OPERATORS / "softmax_rows.py"))
    evaluator = CandidateEvaluator(operator, config=EvaluatorConfig(trials=2), device="cpu")
    verdict = evaluator.evaluate(candidate((HONEST / "softmax.py").read_text(), "honest-softmax"))
    assert verdict.verified, verdict.failure
    assert steps == ["ready", "ran", "decide"]


@pytest.mark.parametrize("warm", [False, True])
def test_a_candidate_file_replaced_before_its_worker_reads_it_is_refused(monkeypatch, warm):
    """Another candidate runs as the same user and could put its own code in this one's job directory before
    the worker reads it; the worker checks the file against the digest it was handed and refuses."""
    real = evaluator_module.run_child
    honest = (HONEST / "softmax.py").read_text()

    def replaced(jobdir, **kwargs):
        (jobdir / "candidate.py").write_text(honest.replace("class ModelNew", "# swapped\nclass ModelNew"))
        return real(jobdir, **kwargs)

    monkeypatch.setattr(evaluator_module, "run_child", replaced)
    operator = load_operator(str(OPERATORS / "softmax_rows.py"))
    config = EvaluatorConfig(trials=2, warm_pool=warm)
    with CandidateEvaluator(operator, config=config, device="cpu") as evaluator:
        verdict = evaluator.evaluate(candidate(honest, "honest-softmax"))
    assert not verdict.verified
    assert verdict.failure.rule == "job_changed" and "changed after the evaluator wrote them" in verdict.failure.message


def test_a_slow_compile_ahead_is_picked_out_of_the_worker_stages():
    from foundry.evaluate.evaluator import SLOW_COMPILE_S, slow_compile

    stages = [("job loaded", 0.03), ("compiled ahead", SLOW_COMPILE_S + 40.0), ("first call", 0.1)]
    assert slow_compile(stages) == pytest.approx(SLOW_COMPILE_S + 40.0)
    assert slow_compile([("job loaded", 0.03), ("compiled ahead", 1.2), ("first call", 30.0)]) is None
    assert slow_compile([("not compiled ahead (autotuned)", 0.0)]) is None
