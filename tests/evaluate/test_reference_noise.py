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
        slacks = evaluator.rounding_slack(model, inputs, [ref])
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
        slacks = evaluator.rounding_slack(model, inputs, [ref])
        floor = SLACK_ULPS * torch.finfo(torch.float32).eps * float(log_p.abs().max())
        assert float(slacks[0]) >= floor * 0.99
        judged = evaluator.trial_tolerances([ref], slacks)
        assert compare(reordered.reshape(ref.shape), ref, judged[0]) is None
        assert compare(ref + 1e-3, ref, judged[0]) is not None
