"""The significance check: where the reference carries an element to 3 significant digits of its fp64 twin, an output
that loses more than half of it is refused, however far below atol the element lies; rounding is not."""

from pathlib import Path

import torch
from foundry.core.records import FailureKind
from foundry.evaluate.correctness import LOST, Tolerance, compare, significant
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

CHEATS = Path(__file__).resolve().parents[1] / "cheats" / "operators"


def judged(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance):
    return compare(out, ref, tol, kind=FailureKind.MISMATCH, what="output 0")


def softmax_case() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    x = torch.randn(8, 64) * 16  # rows spanning ~100 nats: a tail far below atol
    return torch.softmax(x, dim=-1), torch.softmax(x.double(), dim=-1)


def test_a_flushed_softmax_tail_is_refused_and_the_reference_rounding_is_not():
    ref, exact = softmax_case()
    sig = significant(ref, exact)
    assert bool(sig.any()) and bool((ref[sig] < 1e-4).any()), "the premise: significant elements below atol"
    tol = Tolerance(atol=1e-4, rtol=1e-4, significant=sig)
    flushed = torch.where(ref < 1e-4, torch.zeros_like(ref), ref)
    assert judged(flushed, ref, Tolerance(atol=1e-4, rtol=1e-4)) is None, "the premise: atol alone accepts it"
    refused = judged(flushed, ref, tol)
    assert refused is not None and refused.rule == "significance"
    assert judged(exact.float(), ref, tol) is None  # the fp64 answer rounded: honest
    nudged = torch.where(ref < 1e-4, ref * 1.2, ref)  # the tail 20% off: within atol, and no loss of the value
    assert judged(nudged, ref, tol) is None


def test_elements_the_reference_itself_gets_wrong_are_not_judged():
    x = torch.tensor([1e-8, 2e-9, 0.3, -5e-9])
    ref = torch.exp(x) - 1  # cancels: 0 for the tiny ones, where fp64 keeps x
    exact = torch.expm1(x.double())
    sig = significant(ref, exact)
    assert sig.tolist() == [False, False, True, False]
    honest = torch.expm1(x)  # more accurate than the reference there: not refused for it
    assert judged(honest, ref, Tolerance(atol=1e-4, rtol=1e-4, significant=sig)) is None


def test_half_of_a_value_is_the_line():
    ref = torch.tensor([1e-20, 1.0])
    tol = Tolerance(atol=1e-4, rtol=1e-4, significant=torch.tensor([True, True]))
    assert judged(torch.tensor([1e-20 * (1 + 0.9 * LOST), 1.0]), ref, tol) is None
    assert judged(torch.tensor([1e-20 * (1 + 1.1 * LOST), 1.0]), ref, tol) is not None


def test_chunked_outputs_are_judged_too(monkeypatch):
    import foundry.evaluate.correctness as correctness

    monkeypatch.setattr(correctness, "CHUNK", 100)  # 512 elements: judged 100 at a time first
    ref, exact = softmax_case()
    tol = Tolerance(atol=1e-4, rtol=1e-4, significant=significant(ref, exact))
    flushed = torch.where(ref < 1e-4, torch.zeros_like(ref), ref)
    refused = judged(flushed, ref, tol)
    assert refused is not None and refused.rule == "significance"
    assert judged(exact.float(), ref, tol) is None


def test_transformed_trials_carry_the_significance_of_their_reference():
    loaded = load_operator(str(CHEATS / "softmax_rows.py"))
    with CandidateEvaluator(loaded, config=EvaluatorConfig(trials=1), device="cpu") as evaluator:
        model = loaded.module.Model()
        torch.manual_seed(1)
        inputs = [torch.randn(6, 37) * 16]
        ref = model(*inputs)
        slacks, significants = evaluator.rounding_slack(model, inputs, [ref])
        tol = evaluator.trial_tolerances([ref], slacks, significants)[0]
        assert tol.significant is not None and tol.significant.shape == ref.shape
        flushed = torch.where(ref < 1e-4, torch.zeros_like(ref), ref)
        refused = judged(flushed, ref, tol)
        assert refused is not None and refused.rule == "significance"


def test_large_outputs_need_one_more_lost_element_per_four_million(monkeypatch):
    import foundry.evaluate.correctness as correctness

    monkeypatch.setattr(correctness, "LOST_PER", 4)  # 8 elements: 3 lost refuse, 2 are the noise of cancelling sums
    ref = torch.full((8,), 1e-20)
    ref[-1] = 1.0  # the output's scale: the tiny ones are below atol and do not move its RMS
    tol = Tolerance(atol=1e-4, rtol=1e-4, significant=torch.ones(8, dtype=torch.bool))
    two = ref.clone()
    two[:2] = 0
    three = ref.clone()
    three[:3] = 0
    assert judged(two, ref, tol) is None
    assert judged(three, ref, tol).rule == "significance"
    monkeypatch.setattr(correctness, "CHUNK", 3)  # counted across chunks too
    assert judged(two, ref, tol) is None
    assert judged(three, ref, tol).rule == "significance"


def test_values_below_the_outputs_own_rounding_scale_are_not_judged():
    x = torch.tensor([-50.0, -45.0, 0.5, 1000.0, 3.0])  # softplus: 2e-22 and 3e-20 beside 1000
    ref, exact = torch.nn.functional.softplus(x), torch.nn.functional.softplus(x.double())
    sig = significant(ref, exact)
    assert sig.tolist() == [False, False, True, True, True]
    textbook = torch.where(x > 20, x, torch.log(1 + torch.exp(x)))  # log(1 + e^x): 0 for the tiny ones
    assert judged(textbook, ref, Tolerance(atol=1e-4, rtol=1e-4, significant=sig)) is None


def test_a_tail_rounded_to_powers_of_two_is_refused():
    ref, exact = softmax_case()
    tol = Tolerance(atol=1e-4, rtol=1e-4, significant=significant(ref, exact))
    rounded = torch.where(ref < 1e-4, torch.exp2(torch.round(torch.log2(ref))), ref)  # up to 2^0.5 off
    refused = judged(rounded, ref, tol)
    assert refused is not None and refused.rule == "significance"


def test_elements_an_fp32_order_of_operations_moves_are_not_judged():
    loaded = load_operator(str(Path(__file__).resolve().parents[2] / "examples" / "ops" / "layernorm.py"))
    with CandidateEvaluator(loaded, config=EvaluatorConfig(trials=1), device="cpu") as evaluator:
        model = loaded.module.Model(48)
        torch.manual_seed(2)
        with torch.no_grad():
            model.norm.bias.copy_(torch.randn(48) * 1e-4)  # a bias near 0, as a few optimizer steps leave it
        x = torch.randn(4, 48)
        # a constant row: exactly the bias in fp64 and in torch, but (x - mean) * rstd with rstd = 1/sqrt(eps)
        x[1] = 0.7  # amplifies the ulp by which another summation order's mean misses 0.7 to ~2e-5
        ref = model(x)
        assert bool(significant(ref, model.double()(x.double()))[1].any()), "the premise: the reference is exact there"
        model.float()
        _, [sig] = evaluator.rounding_slack(model, [x], [ref])
        assert sig is not None and not bool(sig[1].any())  # noise in any fp32 order: never judged
        assert bool(sig[0].all()) and bool(sig[2:].all())  # ordinary rows: every element judged
    softmax = load_operator(str(CHEATS / "softmax_rows.py"))
    with CandidateEvaluator(softmax, config=EvaluatorConfig(trials=1), device="cpu") as evaluator:
        model = softmax.module.Model()
        torch.manual_seed(0)
        x = torch.randn(8, 64) * 16
        ref = model(x)
        _, [sig] = evaluator.rounding_slack(model, [x], [ref])
        tail = (ref > 1e-5) & (ref < 1e-4)  # below atol, above the floor: steady under a few ulps of its logits
        assert bool(tail.any()) and bool(sig[tail].all())
