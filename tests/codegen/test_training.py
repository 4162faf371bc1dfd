"""Training operators (FOUNDRY_TRAINING = True) from the template writer: each example in examples/training gets a
kernel whose forward and backward are Triton launches, verified by the real evaluator (its gradient check included);
a wrong generated backward is rejected with rule gradient; double backward raises."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch
from codegen_helpers import ROOT, explain
from foundry.codegen import training_render
from foundry.core.records import Candidate
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

pytestmark = [pytest.mark.interp]

TRAINING = ROOT / "examples" / "training"
# the quickest under the interpreter stay in the default run (about 25 s each); the rest are slow
QUICK = {"tanh_gelu_residual", "sigmoid_affine", "mse_loss"}
EXAMPLES = sorted(p.stem for p in TRAINING.glob("*.py"))


def verdict_of(path: Path, source: str, cid: str):
    evaluator = CandidateEvaluator(load_operator(str(path)), policy="strict", config=EvaluatorConfig(trials=1))
    try:
        return evaluator.evaluate(Candidate(id=cid, source=source, writer="template"))
    finally:
        evaluator.close()


def test_there_are_at_least_twelve_training_examples():
    assert len(EXAMPLES) >= 12
    for name in EXAMPLES:
        assert load_operator(str(TRAINING / f"{name}.py")).spec.training, name


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=() if n in QUICK else pytest.mark.slow) for n in EXAMPLES], ids=EXAMPLES
)
def test_each_example_gets_a_verified_training_kernel(writer: TemplateWriter, name: str):
    path = TRAINING / f"{name}.py"
    source = writer.render(load_operator(str(path)).spec, {})
    assert "torch.autograd.Function" in source and "def launch_backward" in source
    verdict = verdict_of(path, source, f"train-{name}")
    assert verdict.verified, explain(verdict)
    assert any(c.startswith("gradients of inputs and parameters") for c in verdict.checks_passed)


@pytest.mark.slow
def test_both_save_modes_of_a_norm_are_verified(writer: TemplateWriter):
    """train.save=inputs recomputes the statistics in the backward; =forward saves mean and rstd (one kernel fewer).
    =forward is the default: its kernel is the one test_each_example_gets_a_verified_training_kernel[layer_norm]
    verifies (the same source, asserted here), so only =inputs is evaluated again."""
    path = TRAINING / "layer_norm.py"
    spec = load_operator(str(path)).spec
    sources = {save: writer.render(spec, {"train.save": save}) for save in ("inputs", "forward")}
    assert "ctx.save_for_backward(x, weight, bias)" in sources["inputs"]
    assert "mean, rstd" in sources["forward"].split("ctx.save_for_backward(")[1].split(")")[0]
    assert sources["forward"] == writer.render(spec, {}), "=forward is no longer the default kernel"
    verdict = verdict_of(path, sources["inputs"], "layer-norm-inputs")
    assert verdict.verified, ("inputs", explain(verdict))


def test_a_wrong_generated_backward_is_rejected_by_the_gradient_check(
    writer: TemplateWriter, monkeypatch: pytest.MonkeyPatch
):
    """The backward kernel's stored gradient patched (its emitter output off by 0.05): the forward still matches,
    the gradient check names the gradient."""
    original = training_render.backward_names

    def patched(e):
        e = original(e)
        wrong = e.kernel.replace(
            "grad_x.to(grad_x_ptr.dtype.element_ty)", "(grad_x + 0.05).to(grad_x_ptr.dtype.element_ty)"
        )
        assert wrong != e.kernel, "the backward kernel no longer stores grad_x as expected"
        return type(e)(**{**e.__dict__, "kernel": wrong})

    monkeypatch.setattr(training_render, "backward_names", patched)
    path = TRAINING / "tanh_gelu_residual.py"
    source = TemplateWriter().render(load_operator(str(path)).spec, {})
    assert "grad_x + 0.05" in source
    verdict = verdict_of(path, source, "wrong-backward")
    assert not verdict.verified
    assert verdict.failure is not None and verdict.failure.rule == "gradient", explain(verdict)
    assert "gradient of input 0" in verdict.failure.message


def test_double_backward_raises(writer: TemplateWriter, tmp_path: Path):
    path = TRAINING / "sigmoid_affine.py"
    loaded = load_operator(str(path))
    kernel = tmp_path / "kernel.py"
    kernel.write_text(writer.render(loaded.spec, {}))
    spec = importlib.util.spec_from_file_location("training_kernel", kernel)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["training_kernel"] = module
    try:
        spec.loader.exec_module(module)
        reference = loaded.model_cls(*loaded.init_inputs(small=True))
        model = module.ModelNew(*loaded.init_inputs(small=True))
        model.load_state_dict(reference.state_dict())
        x = torch.randn(3, 16, requires_grad=True)
        (grad,) = torch.autograd.grad(model(x).sum(), x)  # the first backward runs
        (want,) = torch.autograd.grad(reference(x).sum(), x)
        torch.testing.assert_close(grad, want)
        with pytest.raises(RuntimeError, match="double backward is not supported"):
            torch.autograd.grad(model(x).sum(), x, create_graph=True)
    finally:
        sys.modules.pop("training_kernel", None)


def test_a_backward_without_a_template_is_declined_by_name(tmp_path: Path):
    """A strided convolution's backward (only stride 1, dilation 1 and one group have one)."""
    op = tmp_path / "conv_train.py"
    op.write_text(
        "import torch\nfrom torch import nn\n\nFOUNDRY_TRAINING = True\n\n\nclass Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(3, 4, 3, stride=2)\n\n"
        "    def forward(self, x):\n        return torch.relu(self.conv(x))\n\n\n"
        "def get_inputs():\n    return [torch.randn(2, 3, 8, 8)]\n\n\ndef get_init_inputs():\n    return []\n"
    )
    diagnosis = TemplateWriter().check(load_operator(str(op)).spec)
    assert diagnosis is not None and "convolution_backward" in diagnosis.message and "stride 1" in diagnosis.message


@pytest.mark.parametrize("name", ["rt20_affine_dropout_train", "rt6a_batchnorm_train"])
def test_a_module_that_computes_otherwise_in_train_mode_gets_no_template(writer: TemplateWriter, name: str):
    """Dropout and batch statistics change the train-mode graph: a kernel lowered from the eval-mode graph would be
    wrong where a training kernel is used, so the writer refuses, naming the op."""
    from foundry.core.errors import UnsupportedOperatorError

    path = ROOT / "tests" / "cheats" / "operators" / f"{name}.py"
    with pytest.raises(UnsupportedOperatorError, match="computes otherwise in train mode") as refused:
        writer.render(load_operator(str(path)).spec, {})
    if "dropout" in name:  # a batch norm's training form is decomposed: its first extra op is the count's add_
        assert "dropout" in str(refused.value) or "bernoulli" in str(refused.value) or "rand" in str(refused.value)
