"""Training operators (FOUNDRY_TRAINING): the declaration, the upstream gradients both sides draw, what the
writers do with it, and the gradient check's place in a verdict. The backward cheats themselves are in the
adversarial suite (tests/cheats/candidates/train_*.py, operator affine_train)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest
import torch
from foundry.core.protocols import ProposalRequest
from foundry.core.records import Candidate
from foundry.evaluate import gradients
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import SpecError, load_operator
from foundry.writers.llm import TRAINING_PROMPT, build_messages
from foundry.writers.template import TemplateWriter

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "cheats"
AFFINE = CHEATS / "operators" / "affine_train.py"


def test_the_declaration_is_read_and_can_be_overridden(tmp_path: Path):
    assert load_operator(str(AFFINE)).spec.training is True
    assert load_operator(str(AFFINE), training=False).spec.training is False
    assert load_operator(str(CHEATS / "operators" / "softmax_rows.py")).spec.training is False
    bad = tmp_path / "bad.py"
    bad.write_text(AFFINE.read_text().replace("FOUNDRY_TRAINING = True", 'FOUNDRY_TRAINING = "yes"'))
    with pytest.raises(SpecError, match="FOUNDRY_TRAINING must be True or False"):
        load_operator(str(bad))


def test_upstream_gradients_follow_the_seed_only():
    outs = [torch.empty(3, 5), torch.empty(7, dtype=torch.float64)]
    first, again, other = gradients.upstream(outs, 11), gradients.upstream(outs, 11), gradients.upstream(outs, 12)
    assert [g.shape for g in first] == [o.shape for o in outs] and [g.dtype for g in first] == [o.dtype for o in outs]
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[0], other[0])


def test_gradients_are_asked_for_by_input_and_parameter_name():
    model = torch.nn.Linear(4, 3)
    names, grads, outs = gradients.compute(model, gradients.with_grad([torch.randn(2, 4)]), seed=5)
    assert names == ["input 0", "weight", "bias"] and [tuple(o.shape) for o in outs] == [(2, 3)]
    assert [tuple(g.shape) for g in grads] == [(2, 4), (3, 4), (3,)]
    unused = torch.nn.Module()
    unused.scale = torch.nn.Parameter(torch.ones(1))
    unused.forward = lambda x: x * 2  # type: ignore[method-assign]
    names, grads, _ = gradients.compute(unused, gradients.with_grad([torch.randn(3)]), seed=5)
    assert names == ["input 0", "scale"] and grads[1] is None


def test_upstream_layouts_hold_the_same_draw_in_other_strides():
    out = [torch.empty(3, 5)]
    strided, expanded = gradients.upstream(out, 4, "strided")[0], gradients.upstream(out, 4, "expanded")[0]
    assert strided.shape == (3, 5) and strided.stride() == (10, 2)
    assert torch.equal(strided, gradients.upstream(out, 4, "strided")[0])
    assert expanded.shape == (3, 5) and expanded.stride() == (0, 0) and expanded.unique().numel() == 1


def test_a_broadcast_upstream_has_stride_zero_in_some_dims_but_never_all_nor_the_last_alone():
    two = gradients.upstream([torch.empty(4, 5)], 3, "broadcast")[0]
    assert two.shape == (4, 5) and two.stride() == (0, 1)  # y.sum(0)'s backward
    seen = set()
    for seed in range(40):
        g = gradients.upstream([torch.empty(2, 3, 4)], seed, "broadcast")[0]
        zeros = tuple(s == 0 for s in g.stride())
        assert any(zeros) and not all(zeros) and zeros != (False, False, True)
        seen.add(zeros)
    assert (False, True, False) in seen and (True, False, False) in seen  # y.sum(1), y.sum(0)
    assert gradients.upstream([torch.empty(5)], 3, "broadcast")[0].stride() == (0,)


def test_a_spread_upstream_puts_one_value_in_each_band_of_sizes():
    """Stratified sizes: with as many values as decades, each decade holds exactly one (a loss scaler's 65536 and
    any other threshold on |dy| in the range is crossed whatever the seed); signs both ways."""
    for seed in range(20):
        (dy,) = gradients.upstream([torch.empty(2, 7)], seed, spread=(-8.0, 6.0))
        decades = sorted(int(d) for d in torch.floor(torch.log10(dy.double().abs())).flatten())
        assert decades == list(range(-8, 6)), decades
        assert bool((dy > 0).any()) and bool((dy < 0).any())
    (a,), (b,) = (gradients.upstream([torch.empty(3, 5)], 7, spread=(-8.0, 6.0)) for _ in range(2))
    assert torch.equal(a, b)  # the same on either side of the check


def test_a_row_spread_upstream_gives_each_row_its_own_size_band():
    """(lo, hi, 1): one size per row, stratified (as many rows as decades: one row in each), and tails of its own:
    neither a statistic along the rows nor a row's shape is a normal draw's (a fingerprint of the checked calls
    fails)."""
    kurtoses = []
    for seed in range(10):
        (dy,) = gradients.upstream([torch.empty(6, 400)], seed, spread=(-3.0, 3.0, 1.0))
        medians = dy.double().abs().median(dim=1).values / 0.6745  # a normal row's median |value|: its size
        sizes = sorted(float(d) for d in torch.log10(medians))
        for k, size in enumerate(sizes):  # the k-th smallest row in the k-th decade (its tails move the median a bit)
            assert k - 3 - 0.25 <= size <= k - 2 + 0.25, sizes
        centered = dy.double() - dy.double().mean(1, keepdim=True)
        kurtoses.append(float((centered.pow(4).mean(1) / centered.pow(2).mean(1).pow(2)).mean()))
        assert bool((dy > 0).any(1).all()) and bool((dy < 0).any(1).all())
    # the tails' weight is the draw's: rows near normal in some calls, heavy-tailed in most
    assert sum(k > 4 for k in kurtoses) >= 5 and min(kurtoses) < 4, kurtoses
    (a,), (b,) = (gradients.upstream([torch.empty(3, 5)], 7, spread=(-2.0, 4.0, 1.0)) for _ in range(2))
    assert torch.equal(a, b)


def test_a_loss_may_leave_outputs_out_and_never_all_of_them():
    class Two(torch.nn.Module):
        def forward(self, x):
            return x * 3.0, x * x

    x = torch.randn(4, 5)
    names, whole, _ = gradients.compute(Two(), gradients.with_grad([x]), 11)
    _, first_only, _ = gradients.compute(Two(), gradients.with_grad([x]), 11, unused=[1])
    _, second_only, _ = gradients.compute(Two(), gradients.with_grad([x]), 11, unused=[0])
    dy, ds = gradients.upstream([x, x], 11)
    assert names == ["input 0"]
    assert torch.allclose(first_only[0], 3.0 * dy) and torch.allclose(second_only[0], 2 * x * ds)
    assert torch.allclose(whole[0], 3.0 * dy + 2 * x * ds)
    _, everything_left_out, _ = gradients.compute(Two(), gradients.with_grad([x]), 11, unused=[0, 1])
    assert torch.equal(everything_left_out[0], whole[0])  # none left in would be no loss: all of them stay


def test_holes_zero_whole_slices_past_the_first_dimension():
    found = 0
    for seed in range(20):
        for layout in ("dense", "strided", "padded"):
            g = gradients.upstream([torch.empty(6, 16)], seed, layout, holes=True)[0]
            columns = (g == 0).all(0)
            assert columns.any() and not columns.all()  # some whole columns, never all of them
            found += int(columns.sum())
    assert found > 60


def test_an_accumulate_call_judges_autograd_grad_and_backward_each_as_torch_defines_them():
    class Fused(torch.autograd.Function):  # adds dweight into .grad and returns it as well
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, dy):
            x, w = ctx.saved_tensors
            dw = (dy * x).sum(0)
            if w.grad is not None:
                w.grad.add_(dw)
                return dy * w, torch.zeros_like(dw)
            return dy * w, dw

    class Model(torch.nn.Module):
        def __init__(self, fused: bool):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(4))
            self.fused = fused

        def forward(self, x):
            return Fused.apply(x, self.weight) if self.fused else x * self.weight

    x = torch.randn(3, 4)
    honest, fused = Model(False), Model(True)
    fused.load_state_dict(honest.state_dict())
    written: list[str] = []

    @contextlib.contextmanager
    def backward(kept):
        before = [t.clone() for _, t in kept]
        yield
        written.extend(n for (n, t), b in zip(kept, before, strict=True) if not torch.equal(t, b))

    for how in ("grad", "backward"):
        written.clear()
        ref = gradients.compute(honest, gradients.with_grad([x]), 7, accumulate=how)[1]
        got = gradients.compute(fused, gradients.with_grad([x]), 7, backward=backward, accumulate=how)[1]
        assert honest.weight.grad is None and fused.weight.grad is None  # put back
        if how == "backward":  # .grad grows by the gradient: right
            assert torch.allclose(ref[1], got[1], atol=1e-5) and not written
        else:  # returned zero, and .grad written: both seen
            assert not torch.allclose(ref[1], got[1], atol=1e-5) and written == ["the .grad of weight"]


def test_a_change_in_place_after_the_forward_is_refused_loudly_or_leaves_the_gradients_of_the_forward():
    class Stash(torch.autograd.Function):  # keeps x on ctx: no version check
        @staticmethod
        def forward(ctx, x, w):
            ctx.x, ctx.w = x, w
            return (x * w).view(x.shape)

        @staticmethod
        def backward(ctx, dy):
            return dy * ctx.w, (dy * ctx.x).sum(0)

    class Model(torch.nn.Module):
        def __init__(self, stash: bool):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(4))
            self.stash = stash

        def forward(self, x):
            return Stash.apply(x, self.weight) if self.stash else x * self.weight

    x = torch.randn(3, 4)
    honest, stash = Model(False), Model(True)
    stash.load_state_dict(honest.state_dict())
    weight = honest.weight.detach().clone()
    plain = gradients.compute(honest, gradients.with_grad([x]), 7)[1]
    with pytest.raises(gradients.RefusedInPlace):  # x * w saved both
        gradients.compute(honest, gradients.with_grad([x]), 7, modify=3)
    assert torch.equal(honest.weight, weight)  # put back
    got = gradients.compute(stash, gradients.with_grad([x]), 7, modify=3)[1]
    assert not torch.allclose(plain[1], got[1])  # the stash read the changed x: what the check rejects
    assert torch.equal(stash.weight, weight)
    masked = gradients.compute(honest, gradients.with_grad([x]), 7, mask=5)[1]
    assert torch.equal(masked[1], gradients.compute(honest, gradients.with_grad([x]), 7, mask=5, in_place=True)[1][1])
    with pytest.raises(gradients.RefusedInPlace):  # a view output of a custom Function
        gradients.compute(stash, gradients.with_grad([x]), 7, mask=5, in_place=True)


def test_degenerate_inputs_have_zero_rows_and_a_dead_feature_drawn_from_the_seed():
    x, y, w = torch.randn(4, 3, 5) + 2.0, torch.randn(8, 6) + 2.0, torch.randn(5) + 2.0
    first, again, other = (gradients.degenerate([w, x, 7, y], seed) for seed in (5, 5, 6))
    assert first[0] is w and first[2] == 7  # a 1-d input and a number stay as they are
    for got in (first[1], first[3]):  # every matrix input: a quarter of its rows zero
        zero = (got == 0).all(dim=-1)
        assert int(zero.sum()) == got[..., 0].numel() // 4
    dead = [k for k in range(5) if bool((first[1][..., k] == 0).all())]
    assert len(dead) == 1 and not any(bool((first[3][:, k] == 0).all()) for k in range(6))  # the first one's only
    assert torch.equal(first[1], again[1]) and not torch.equal(first[1], other[1])
    assert not bool((x == 0).any()) and gradients.degenerate([w, x], None)[1] is x  # x itself is untouched


def test_a_quiet_call_runs_the_forward_alone_with_autograd_off():
    model = torch.nn.BatchNorm1d(3).train()
    x = torch.randn(8, 3) * 2 + 1
    for how in ("no_grad", "inference"):
        model.reset_running_stats()
        names, grads, outs = gradients.compute(model, gradients.with_grad([x], frozen=True), 3, quiet=how)
        assert names == [] and grads == [] and len(outs) == 1 and not outs[0].requires_grad
        assert not outs[0].is_inference()  # a copy the caller may keep
        assert torch.allclose(model.running_mean, 0.1 * x.mean(0))  # batch statistics moved, as in train mode


def test_inputs_keep_their_layout_and_may_be_frozen():
    x = torch.randn(6, 4).t()
    held = gradients.with_grad([x])[0]
    assert held.stride() == x.stride() and torch.equal(held, x) and held.requires_grad
    frozen = gradients.with_grad([x], frozen=True)[0]
    assert not frozen.requires_grad and torch.equal(frozen, x)
    model = torch.nn.Linear(6, 2)
    names, grads, _ = gradients.compute(model, gradients.with_grad([x], frozen=True), seed=3)
    assert names == ["weight", "bias"] and grads[0].shape == (2, 6)


def test_the_backward_is_told_what_to_leave_unchanged():
    seen: list[str] = []

    def backward(kept):
        seen.extend(name for name, _ in kept)
        return contextlib.nullcontext()

    gradients.compute(torch.nn.Linear(4, 3), gradients.with_grad([torch.randn(2, 4)]), 5, backward=backward)
    assert seen == ["upstream gradient 0", "input 0"]


def test_a_forward_returning_a_tensor_subclass_is_refused_before_its_methods_run():
    class Odd(torch.Tensor):
        pass

    class Model(torch.nn.Module):
        def forward(self, x):
            return (x * 2).as_subclass(Odd)

    with pytest.raises(TypeError, match="tensor subclass"):
        gradients.compute(Model(), gradients.with_grad([torch.randn(3)]), seed=1)


def test_a_forward_outside_autograd_is_named_as_such():
    class Detached(torch.nn.Module):
        def forward(self, x):
            return x.detach() * 2

    with pytest.raises(RuntimeError, match="not connected to autograd"):
        gradients.compute(Detached(), gradients.with_grad([torch.randn(3)]), seed=1)


def test_the_template_writer_writes_a_triton_backward_for_training_operators():
    """The template writer generates training operators (codegen/training.py; tests/codegen/test_training.py
    verifies them): a torch.autograd.Function whose backward launches Triton kernels; forward-only otherwise."""
    writer = TemplateWriter()
    assert writer.check(load_operator(str(AFFINE)).spec) is None
    source = writer.render(load_operator(str(AFFINE)).spec, {})
    assert "torch.autograd.Function" in source and "def launch_backward" in source
    assert "class ForwardOnly" in writer.render(load_operator(str(AFFINE), training=False).spec, {})


def test_the_llm_writer_asks_for_a_triton_backward_only_for_training_operators():
    def system(training: bool) -> str:
        loaded = load_operator(str(AFFINE), training=training)
        request = ProposalRequest(
            spec=loaded.spec, operator_source=loaded.source, expert="fusion", island=0, generation=0
        )
        return build_messages(request, "")[0]["content"]

    assert TRAINING_PROMPT in system(True)
    assert TRAINING_PROMPT not in system(False)


@pytest.fixture(scope="module")
def affine_evaluator():
    evaluator = CandidateEvaluator(load_operator(str(AFFINE)), config=EvaluatorConfig())
    yield evaluator
    evaluator.close()


def test_an_honest_training_kernel_is_verified_with_its_gradients_checked(affine_evaluator):
    source = (CHEATS / "candidates" / "train_ok_affine.py").read_text()
    verdict = affine_evaluator.evaluate(Candidate(id="train-ok", source=source))
    assert verdict.verified, verdict.failure and verdict.failure.headline()
    assert any(c.startswith("gradients of inputs and parameters") for c in verdict.checks_passed)


def test_the_same_kernel_without_the_declaration_is_not_asked_for_gradients():
    evaluator = CandidateEvaluator(load_operator(str(AFFINE), training=False), config=EvaluatorConfig())
    try:
        source = (CHEATS / "candidates" / "train_zero_param_grads.py").read_text()
        verdict = evaluator.evaluate(Candidate(id="forward-only-use", source=source))
    finally:
        evaluator.close()
    assert verdict.verified, verdict.failure and verdict.failure.headline()  # its forward is right
    assert not any(c.startswith("gradients") for c in verdict.checks_passed)


def test_a_backward_right_only_before_the_parameters_move_is_rejected():
    """The second gradient call runs after the parameters changed in place: a backward that kept the weight it
    saw first (in a module-level list, which the static guard would refuse: off here) gives the input's gradient
    with the old weight; the state scan around each gradient call sees the list grow first."""
    source = (CHEATS / "candidates" / "train_ok_affine.py").read_text()
    stale = source.replace(
        "        _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))",
        "        if not FIRST:\n"
        "            FIRST.append(weight.detach().clone())\n"
        "        _affine_bwd_x[(rows,)](dy2, FIRST[0], dx, n, BLOCK=triton.next_power_of_2(n))",
    ).replace("class AffineFunction", "FIRST = []\n\n\nclass AffineFunction")
    assert stale.count("FIRST") == 4
    evaluator = CandidateEvaluator(load_operator(str(AFFINE)), config=EvaluatorConfig(static_guard=False))
    try:
        verdict = evaluator.evaluate(Candidate(id="stale-backward", source=stale))
    finally:
        evaluator.close()
    assert not verdict.verified and verdict.failure is not None
    # the state scan around the gradient calls sees the kept weight first; past it, the moved call's gradient
    assert verdict.failure.rule in ("state_unmodified", "gradient"), verdict.failure.headline()
    assert "module.FIRST" in verdict.failure.message or "trial 1" in verdict.failure.message


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_gradient_calls_answers_move_whole_between_devices():
    """On a GPU the gradient calls' reference answers wait on the host and come back one call at a time
    (CandidateEvaluator.held): every tensor in an entry moves, tolerances included, and nothing else changes."""
    from dataclasses import fields, is_dataclass

    from foundry.evaluate.evaluator import tensors_to

    evaluator = CandidateEvaluator(load_operator(str(AFFINE)), config=EvaluatorConfig())
    prepared = evaluator.prepare()
    assert prepared.gradients

    def tensors(value):
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from tensors(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                yield from tensors(v)
        elif is_dataclass(value) and not isinstance(value, type):
            for f in fields(value):
                yield from tensors(getattr(value, f.name))

    for entry in prepared.gradients:
        away = tensors_to(entry, "meta")
        before, after = list(tensors(entry)), list(tensors(away))
        assert len(after) == len(before) > 0 and all(t.device.type == "meta" for t in after)
        assert [t.shape for t in after] == [t.shape for t in before] and all(t.device.type == "cpu" for t in before)
        assert away.keys() == entry.keys()
        assert all(away[k] == entry[k] for k in entry if not list(tensors(entry[k])))
        tolerances = [t for t in entry["tolerances"] if t is not None]
        assert [(t.atol, t.rtol) for t in away["tolerances"] if t is not None] == [(t.atol, t.rtol) for t in tolerances]
    prepared.close()
