"""The rounding slack of gradient calls: fp64 gradients with every input, parameter, upstream value and op result
moved by an ulp (jittered, Jostled). An honest fp32 backward of a batch norm on rows offset far from zero lands within
NOISE_FACTOR times that spread of fp64, however the upstream cancels; one recomputing the variance in one pass does
not."""

from __future__ import annotations

import copy

import torch
from foundry.evaluate.evaluator import JOSTLE_ULPS, NOISE_FACTOR, Jostled, jittered

UNIT = JOSTLE_ULPS * torch.finfo(torch.float32).eps


def input_grad(model: torch.nn.Module, x: torch.Tensor, upstream: torch.Tensor) -> torch.Tensor:
    x = x.clone().requires_grad_(True)
    return torch.autograd.grad(model(x), x, upstream)[0]


def by_hand(x: torch.Tensor, weight: torch.Tensor, upstream: torch.Tensor, one_pass: bool) -> torch.Tensor:
    """A batch norm's input gradient in fp32 as a kernel computes it: two-pass variance, or E[x^2] - E[x]^2."""
    mean = x.mean(0)
    centred = x - mean
    var = (x * x).mean(0) - mean * mean if one_pass else (centred * centred).mean(0)
    rstd = 1 / torch.sqrt(var.clamp(min=0) + 1e-5)
    x_hat, g = centred * rstd, upstream * weight
    return rstd * (g - g.mean(0) - x_hat * (g * x_hat).mean(0))


def spread(model: torch.nn.Module, x: torch.Tensor, upstream: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    gaps = []
    for seed in (1, 2):
        twin = copy.deepcopy(model).double()
        [moved] = jittered(twin, [x.double()], seed, UNIT)
        with Jostled(seed, UNIT):
            gaps.append((input_grad(twin, moved, upstream.double()) - exact).abs())
    return torch.maximum(*gaps)


def test_an_honest_backward_on_offset_rows_is_within_the_slack_and_a_one_pass_variance_is_not():
    for seed in range(3):
        torch.manual_seed(seed)
        norm = torch.nn.BatchNorm1d(16).train()
        with torch.no_grad():
            norm.weight.normal_()
        x = torch.randn(8, 16)
        x = x + 100 * x.std()  # the far-offset trial
        for upstream in (torch.full((8, 16), 0.37), torch.randn(8, 16)):  # broadcast (cancels to 0), dense
            exact = input_grad(copy.deepcopy(norm).double(), x.double(), upstream.double())
            slack = NOISE_FACTOR * spread(norm, x, upstream, exact)
            honest = (by_hand(x, norm.weight.detach(), upstream, one_pass=False).double() - exact).abs()
            assert bool((honest <= slack + 1e-7).all()), (seed, float(honest.max()), float(slack.max()))
            if upstream.std() > 0:  # a broadcast upstream gives 0 whatever the variance
                wrong = (by_hand(x, norm.weight.detach(), upstream, one_pass=True).double() - exact).abs()
                assert float(wrong.max()) > 4 * float(slack.max()), (seed, float(wrong.max()), float(slack.max()))


def test_views_and_in_place_results_are_left_alone():
    x = torch.arange(6, dtype=torch.float64).reshape(2, 3) + 1
    with Jostled(0, 1e-3):
        view = x.t()
        moved = x * 1.0
    assert view.data_ptr() == x.data_ptr() and torch.equal(view, x.t().clone())
    assert not torch.equal(moved, x) and bool(((moved / x - 1).abs() <= 1e-3 + 1e-12).all())
