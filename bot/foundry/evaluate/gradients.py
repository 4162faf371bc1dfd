"""Gradients for training operators (an operator file's `FOUNDRY_TRAINING = True`): the same computation on both
sides of the check. The evaluator runs it on the reference (in working precision and in fp64, for the noise slack);
the worker runs it on the candidate, forward and backward each under the runtime guard's op log. Each check call
draws its upstream gradients from a seed the evaluator picks per candidate; the gradients asked for are those of
every floating input (made to require grad) and of every parameter, by the reference's state names (the
candidate's state is loaded from the reference's state dict, strictly, so the names are the same). Taken with
torch.autograd.grad, so nothing accumulates into `.grad` and no earlier call's gradients are read.

Imports torch only (the worker imports this before candidate code runs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

TRIALS = 2  # check calls: trial 0 and, where there is one, trial 1 (another draw at the default shape)


def upstream(outputs: list[torch.Tensor], seed: int) -> list[torch.Tensor]:
    """One standard-normal upstream gradient per output, drawn on the CPU from `seed` (the same on either side of
    the check and on any device), in the output's dtype, on its device."""
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.randn(o.shape, generator=generator, dtype=torch.float64).to(dtype=o.dtype, device=o.device)
        for o in outputs
    ]


def with_grad(inputs: list[Any]) -> list[Any]:
    """The inputs as leaves that require grad (floating tensors; other arguments as they are)."""
    return [
        x.detach().clone().requires_grad_(True) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
        for x in inputs
    ]


def targets(model: torch.nn.Module, inputs: list[Any]) -> tuple[list[str], list[torch.Tensor]]:
    """What gradients are asked for, by name ("input 0", or a parameter's state name), and the tensors."""
    names, tensors = [], []
    for k, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.requires_grad:
            names.append(f"input {k}")
            tensors.append(x)
    for name, p in model.named_parameters():
        if p.requires_grad:
            names.append(name)
            tensors.append(p)
    return names, tensors


def differentiable(out: Any) -> list[torch.Tensor]:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, torch.Tensor) and o.is_floating_point()]


def compute(
    model: torch.nn.Module,
    inputs: list[Any],
    seed: int,
    forward: Callable[[], Any] | None = None,
    backward: Callable[[], Any] | None = None,
) -> tuple[list[str], list[torch.Tensor | None]]:
    """The gradients of sum(output * upstream) for every target, None where an output does not depend on it.
    `forward` and `backward` give a context for each half (the worker's op log and poison); `inputs` must already
    require grad (with_grad). Raises what the model raises, and RuntimeError where no floating output carries a
    gradient at all (a forward-only kernel: its outputs were made outside autograd)."""
    import contextlib

    names, tensors = targets(model, inputs)
    with torch.enable_grad():
        with forward() if forward is not None else contextlib.nullcontext():
            out = model(*inputs)
        outs = differentiable(out)
        carried = [o for o in outs if o.requires_grad]
        if not carried:
            raise RuntimeError(
                "no output carries a gradient: the forward's results are not connected to autograd (a forward-only "
                "kernel, or outputs built outside a torch.autograd.Function); this operator is checked for training"
            )
        grads_out = upstream(carried, seed)
        with backward() if backward is not None else contextlib.nullcontext():
            grads = torch.autograd.grad(carried, tensors, grads_out, allow_unused=True)
    return names, list(grads)
