"""Transformed trials where the answer is mostly rounding: the tolerance keeps the reference's own fp32 noise."""

from pathlib import Path

import torch
from foundry.core.records import FailureKind
from foundry.evaluate.correctness import compare as judge
from foundry.evaluate.evaluator import NOISE_FACTOR, SLACK_ULPS, CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

OPERATORS = Path(__file__).resolve().parent / "operators"


def compare(out, ref, tol):
    return judge(out, ref, tol, kind=FailureKind.MISMATCH, what="output 0")


def test_a_loss_of_nearly_equal_distributions_is_judged_with_the_references_own_noise():
    loaded = load_operator(str(OPERATORS / "kl_near_uniform.py"))
    with CandidateEvaluator(loaded, config=EvaluatorConfig(trials=2), device="cpu") as evaluator:
        model = loaded.module.Model()
        torch.manual_seed(5)  # a draw where fp32 rounding moves the loss by about 5%
        inputs = [torch.randn(16, 300) * 1e-3, torch.randn(16, 300) * 1e-3]
        ref = model(*inputs)
        exact = model.double()(*[x.double() for x in inputs]).float()
        model.float()
        gap = float((ref - exact).abs())
        assert gap > 1e-4 * abs(float(exact)), "the premise: the fp32 reference itself is off by more than rtol"
        honest = exact  # a kernel more accurate than the reference (fp64 accumulation) is honest too
        plain = evaluator.trial_tolerances([ref])
        assert compare(honest, ref, plain[0]) is not None, "without the noise slack the honest answer is refused"
        slacks, _ = evaluator.rounding_slack(model, inputs, [ref])
        judged = evaluator.trial_tolerances([ref], slacks)
        assert compare(honest, ref, judged[0]) is None
        assert float(slacks[0]) >= NOISE_FACTOR * gap * 0.99
        wrong = ref + 1e-3  # a KL off by 1e-3 between distributions of mass 1 is no rounding: still refused
        assert compare(wrong, ref, judged[0]) is not None


def test_a_loss_that_cancels_keeps_the_rounding_of_its_largest_intermediate():
    """An honest kernel summing the same terms in another order differs from the reference by the rounding of
    the intermediates (log-probabilities of about log C), not of the loss (near zero) or the reference's own
    distance from fp64, which can be far smaller."""
    loaded = load_operator(str(OPERATORS / "kl_near_uniform.py"))
    with CandidateEvaluator(loaded, config=EvaluatorConfig(trials=2), device="cpu") as evaluator:
        model = loaded.module.Model()
        torch.manual_seed(3)
        inputs = [torch.randn(5, 12) * 1e-3, torch.randn(5, 12) * 1e-3]
        ref = model(*inputs)
        log_p = torch.log_softmax(inputs[0], -1)
        q = torch.softmax(inputs[1], -1)
        reordered = ((q * torch.log(q)).sum() - (q * log_p).sum()) / inputs[0].shape[0]  # one way a kernel sums
        slacks, _ = evaluator.rounding_slack(model, inputs, [ref])
        floor = SLACK_ULPS * torch.finfo(torch.float32).eps * float(log_p.abs().max())
        assert float(slacks[0]) >= floor * 0.99
        judged = evaluator.trial_tolerances([ref], slacks)
        assert compare(reordered.reshape(ref.shape), ref, judged[0]) is None
        assert compare(ref + 1e-3, ref, judged[0]) is not None


def test_a_linear_layer_with_signed_weights_keeps_the_rounding_of_its_terms():
    """An output of a linear layer that its signed products cancel to near zero (then clipped by a ReLU on |x|)
    keeps the rounding of the products summed: a kernel that splits fp32 into tf32 halves (three products) rounds
    each product a little more than fp32 does and is honest."""
    loaded = load_operator(str(Path(__file__).resolve().parents[2] / "examples" / "ops" / "linear_bias_relu.py"))
    with CandidateEvaluator(loaded, config=EvaluatorConfig(trials=2), device="cpu") as evaluator:
        torch.manual_seed(11)
        model = loaded.module.Model(24, 40)
        inputs = [torch.randn(20, 24) * 1e3]
        ref = model(*inputs)
        w, b = model.linear.weight.detach(), model.linear.bias.detach()
        terms = inputs[0].abs() @ w.abs().T + b.abs()
        slacks, _ = evaluator.rounding_slack(model, inputs, [ref])
        floor = SLACK_ULPS * torch.finfo(torch.float32).eps * terms * 2.0
        assert bool((slacks[0] >= floor * 0.99).all()), "every element keeps its terms' rounding"
        judged = evaluator.trial_tolerances([ref], slacks)
        near_zero = (ref > 0) & (ref < 1.0)
        assert bool(near_zero.any()), "the premise: some outputs cancel to below 1 from terms of about 1e3"
        nudged = ref + near_zero * (8 * torch.finfo(torch.float32).eps * terms * 2.0)  # a few ulps of the terms
        assert compare(nudged, ref, judged[0]) is None
        assert compare(ref + near_zero * 1.0, ref, judged[0]) is not None  # off by 1 there is no rounding
