"""The breadth suite (examples/breadth, issue 28): every operator file imports, its Model runs on its CPU inputs
(and CPU shape variants) in eager PyTorch, and the family counts meet the minimums. No kernel runs here."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest
import torch

SUITE = Path(__file__).resolve().parents[2] / "examples" / "breadth"
FILES = sorted(p for p in SUITE.glob("*/*.py") if not p.name.startswith("_") and not p.parent.name.startswith("_"))
REPRODUCERS = sorted(SUITE.glob("_bugs/*.py"))  # minimal reproducers of product bugs the suite found

# Minimum operators per family (the proportions of model code: many elementwise, norm, loss and matmul operators,
# fewer scans, sorts and whole blocks) and in all.
MINIMUMS = {
    "elementwise": 10,
    "reduction": 6,
    "norm": 7,
    "softmax_loss": 10,
    "matmul": 10,
    "conv": 7,
    "pool": 4,
    "scan": 4,
    "sort": 4,
    "gather_scatter": 7,
    "einsum": 4,
    "attention": 4,
    "block": 6,
}
TOTAL_MINIMUM = 80
LOW_PRECISION_MINIMUM = 12


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"breadth_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tensors(out):
    if isinstance(out, torch.Tensor):
        return [out]
    assert isinstance(out, (tuple, list)), f"output is a {type(out).__name__}"
    return [t for item in out for t in _tensors(item)]


def test_family_counts():
    counts = Counter(p.parent.name for p in FILES)
    assert sum(counts.values()) >= TOTAL_MINIMUM, counts
    missing = {fam: (counts.get(fam, 0), n) for fam, n in MINIMUMS.items() if counts.get(fam, 0) < n}
    assert not missing, f"families below their minimum (have, need): {missing}"
    unknown = set(counts) - set(MINIMUMS)
    assert not unknown, f"families without a minimum: {unknown}"


def test_low_precision_share():
    low = [
        p
        for p in FILES
        if 'FOUNDRY_PRECISION = "fp16"' in p.read_text() or 'FOUNDRY_PRECISION = "bf16"' in p.read_text()
    ]
    assert len(low) >= LOW_PRECISION_MINIMUM, [p.name for p in low]


@pytest.mark.parametrize("path", FILES + REPRODUCERS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_operator_runs_eagerly_on_cpu_inputs(path: Path):
    module = _load(path)
    for name in ("Model", "get_inputs", "get_init_inputs", "get_cpu_inputs", "get_cpu_shape_variants"):
        assert hasattr(module, name), f"{path}: no {name}"
    assert module.FOUNDRY_PRECISION in ("fp32", "tf32", "fp16", "bf16")
    assert (module.__doc__ or "").strip(), f"{path}: no docstring"
    init = module.get_cpu_init_inputs() if hasattr(module, "get_cpu_init_inputs") else module.get_init_inputs()
    torch.manual_seed(0)
    model = module.Model(*init)
    shapes = [module.get_cpu_inputs()] + list(module.get_cpu_shape_variants())
    assert len(shapes) >= 2, f"{path}: declare at least two CPU shapes"
    for inputs in shapes:
        assert sum(t.numel() for t in inputs if isinstance(t, torch.Tensor)) <= 20_000, f"{path}: CPU inputs too big"
        with torch.no_grad():
            outs = _tensors(model(*inputs))
        assert outs
        for out in outs:
            if out.is_floating_point():
                assert torch.isfinite(out).all(), f"{path}: non-finite output at {[tuple(t.shape) for t in inputs]}"
    if module.FOUNDRY_PRECISION in ("fp16", "bf16"):
        want = torch.float16 if module.FOUNDRY_PRECISION == "fp16" else torch.bfloat16
        dtypes = {t.dtype for t in module.get_cpu_inputs() if isinstance(t, torch.Tensor) and t.is_floating_point()}
        assert want in dtypes, f"{path}: declared {module.FOUNDRY_PRECISION} but its inputs are {dtypes}"


def test_gpu_shapes_declared_without_building_them():
    """The GPU-sized get_inputs are not built here (too large for CI); each file declares a latency-bound variant."""
    for path in FILES:  # the reproducers under _bugs need not declare one
        text = path.read_text()
        assert "def get_shape_variants" in text, f"{path}: no small latency-bound GPU shape (get_shape_variants)"


def _tool():
    spec = importlib.util.spec_from_file_location("breadth_tool", SUITE.parents[1] / "tools" / "breadth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tool_classifies_cli_outcomes():
    """tools/breadth.py sorts the CLI's exit codes, reports and stderr into the coverage statuses."""
    classify = _tool().classify
    ok = '{"verified": true, "best_verdict": {"library_ops": ["convolution"], "kernels": [{"name": "k"}]}}'
    assert classify(0, ok, "", False)["status"] == "verified"
    assert classify(0, ok, "", False)["library_ops"] == ["convolution"]
    note = "search stopped: no writer can express this operator: template: aten.cumsum.default: no Triton template"
    report = json.dumps({"verified": False, "failures": {"unsupported": 1}, "notes": [note]})
    unsupported = classify(1, report, "", False)
    assert unsupported["status"] == "unsupported" and unsupported["unsupported_ops"] == ["aten.cumsum.default"]
    rejected = classify(1, '{"verified": false, "failures": {"mismatch": 2}, "notes": []}', "", False)
    assert rejected["status"] == "rejected"
    assert classify(2, "", "foundry: error: x.py: no such operator file\n", False)["status"] == "bad_input"
    crash = classify(3, "", "Traceback (most recent call last):\n  ...\nKeyError: 'x'\n", False)
    assert crash["status"] == "error" and "KeyError" in crash["stderr_tail"]
    assert classify(1, ok.replace("true", "false"), "Traceback (most recent call last):\n", False)["status"] == "error"
    assert classify(None, "", "", True)["status"] == "timeout"
