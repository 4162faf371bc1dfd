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

# how an upstream gradient is held (upstream())
LAYOUTS = ("dense", "strided", "padded", "expanded", "permuted", "rows")


def upstream(
    outputs: list[torch.Tensor],
    seed: int,
    layout: str = "dense",
    scale: float = 1.0,
    spread: tuple[float, float] | None = None,
    holes: bool = False,
) -> list[torch.Tensor]:
    """One normal upstream gradient per output (standard deviation `scale`: a mean over a large batch hands back
    values far below 1, a loss scaler far above), drawn on the CPU from `seed` (the same on either side of the
    check and on any device), in the output's dtype, on its device. `layout`: "dense" (contiguous), "strided"
    (every other element of a buffer twice as wide: what a transposed or sliced use downstream hands back),
    "padded" (rows in a buffer twice as wide, unit inner stride: what a concatenation downstream hands back),
    "expanded" (one value broadcast with stride 0: what `y.sum().backward()` hands back) or "permuted" (the
    first two dimensions swapped in memory: what `y.transpose(0, 1)` downstream hands back; dense below 2-d) or
    "rows" (one value per row broadcast along the last dimension, strides (..., 1, 0): what `y.sum(-1)` or
    `y.mean(-1)` downstream hands back; expanded at 1-d). `spread` (lo, hi): each value's size drawn apart,
    log-uniform between 10**lo and 10**hi (a threshold on |dy| anywhere in that range is crossed within the call).
    `holes`: exact zeros, about a quarter of the rows (a masked or padded loss) and an eighth of the other values
    (a ReLU or dropout downstream); rows of the drawn buffer, which are the output's rows except when permuted."""
    generator = torch.Generator().manual_seed(seed)

    def draw(shape: tuple[int, ...], o: torch.Tensor) -> torch.Tensor:
        values = torch.randn(shape, generator=generator, dtype=torch.float64) * scale
        if spread is not None:
            exponents = torch.rand(shape, generator=generator, dtype=torch.float64) * (spread[1] - spread[0])
            values = values * torch.pow(10.0, exponents + spread[0])
        if holes and len(shape) >= 1:
            rows = torch.rand((*shape[:-1], 1), generator=generator, dtype=torch.float64) < 0.25
            rows.view(-1)[torch.randint(rows.numel(), (1,), generator=generator)] = True  # at least one row
            scattered = torch.rand(shape, generator=generator, dtype=torch.float64) < 0.125
            values = values.masked_fill(rows | scattered, 0.0)
        return values.to(dtype=o.dtype, device=o.device)

    drawn = []
    for o in outputs:
        if layout == "expanded":
            drawn.append(draw((), o).expand(o.shape))
        elif layout in ("strided", "padded") and o.dim() >= 1 and o.numel() > 0:
            wide = draw((*o.shape[:-1], 2 * o.shape[-1]), o)
            drawn.append(wide[..., ::2] if layout == "strided" else wide[..., : o.shape[-1]])
        elif layout == "permuted" and o.dim() >= 2:
            drawn.append(draw((o.shape[1], o.shape[0], *o.shape[2:]), o).transpose(0, 1))
        elif layout == "rows" and o.dim() >= 1:
            drawn.append(draw((*o.shape[:-1], 1), o).expand(o.shape))
        else:
            drawn.append(draw(tuple(o.shape), o))
    return drawn


def with_grad(inputs: list[Any], frozen: bool = False, nonleaf: bool = False) -> list[Any]:
    """Fresh copies of the floating inputs that require grad (other arguments as they are), in the inputs' own
    layout: a non-contiguous input stays a view with its strides (of a buffer that requires grad). `frozen`:
    copies that do not require grad (a first layer's data: only the parameters' gradients are asked for);
    `nonleaf`: outputs of other ops (x * 1 + 0 on a leaf), as every layer but the first gets its input."""
    chained = nonleaf and not frozen
    return [
        leaf(x, not frozen, chained) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs
    ]


def leaf(x: torch.Tensor, requires: bool, chained: bool = False) -> torch.Tensor:
    x = x.detach()
    strided = not (x.is_contiguous() or x.numel() == 0 or 0 in x.stride())
    if strided:
        span = x.storage_offset() + 1 + sum((n - 1) * s for n, s in zip(x.shape, x.stride(), strict=True))
        buffer = torch.zeros(span, dtype=x.dtype, device=x.device)
        buffer.as_strided(x.shape, x.stride(), x.storage_offset()).copy_(x)
    else:
        buffer = x.contiguous().clone()
    buffer.requires_grad_(requires)
    if chained:
        with torch.enable_grad():
            buffer = buffer * 1 + 0
    return buffer.as_strided(x.shape, x.stride(), x.storage_offset()) if strided else buffer


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


class DetachedSecondOrder(RuntimeError):
    """Gradients asked for under create_graph=True that carry no graph where the reference's do: a backward
    whose own derivative is silently zero (neither computed nor refused)."""

    def __init__(
        self,
        names: list[str],
        first: tuple[list[str], list[torch.Tensor | None], list[torch.Tensor]] = ([], [], []),
    ) -> None:
        super().__init__(", ".join(names))
        self.names = names
        self.first = first  # the first-order gradients as built (detached), with their names and the outputs


class RefusedSecondOrder(RuntimeError):
    """A double backward that raised when the second backward reached it (as once_differentiable's does), after the
    first-order gradients were built under create_graph: those are judged (a gradient penalty reads them)."""

    def __init__(
        self, cause: Exception, first: tuple[list[str], list[torch.Tensor | None], list[torch.Tensor]]
    ) -> None:
        super().__init__(type(cause).__name__)
        self.cause = cause
        self.first = first  # as DetachedSecondOrder's


def compute(
    model: torch.nn.Module,
    inputs: list[Any],
    seed: int,
    forward: Callable[[], Any] | None = None,
    backward: Callable[[list[tuple[str, torch.Tensor]]], Any] | None = None,
    layout: str = "dense",
    scale: float = 1.0,
    again: int | None = None,
    second: int | None = None,
    wanted: list[str] | None = None,
    spread: tuple[float, float] | None = None,
    holes: bool = False,
    accumulate: bool = False,
    constant: bool = False,
) -> tuple[list[str], list[torch.Tensor | None], list[torch.Tensor]]:
    """The gradients of sum(output * upstream) for every target, None where an output does not depend on it, and
    the forward's floating outputs. `forward` gives a context for the forward, `backward` one for each backward
    given the tensors it must leave unchanged, by name (the upstream gradients and the inputs): the worker's op
    log and poison. `inputs` come from with_grad (leaves, or outputs of ops on leaves). `scale`, `spread`: the
    upstream gradients' size (upstream()). `again`: first a backward through the same graph from another draw
    (seed `again`, retain_graph=True, its result dropped), as a second loss through the same layer has it. `second`: the
    derivative of those gradients instead (create_graph=True, then a vector-Jacobian product from the draw
    `second` of the gradients named in `wanted`, by default of every one that carries a graph): the gradients are then
    the first-order ones (as built under create_graph) followed by the second-order ones of the targets and of the
    upstream gradients; raises DetachedSecondOrder where a wanted gradient carries none, RefusedSecondOrder where
    the second backward raises (both carry the first-order gradients). `constant`: under `second`, upstream
    gradients that do not require grad (a gradient penalty on `y.sum()`), not ones that do (a nonlinear loss).
    `holes`: exact zeros in the upstream gradients (upstream()). `accumulate`: the backward runs while the targets'
    .grad already hold values (gradient accumulation; accumulated()). Raises what the model raises, and
    RuntimeError where no floating output carries a gradient (a forward-only kernel, or a fast path that leaves
    autograd)."""
    import contextlib

    names, tensors = targets(model, inputs)

    def observed(kept: list[tuple[str, torch.Tensor]]) -> Any:
        return backward(kept) if backward is not None else contextlib.nullcontext()

    with torch.enable_grad():
        with forward() if forward is not None else contextlib.nullcontext():
            out = model(*inputs)
        returned = list(out) if isinstance(out, (tuple, list)) else [out]
        foreign = [type(o).__name__ for o in returned if isinstance(o, torch.Tensor) and type(o) is not torch.Tensor]
        if foreign:  # its methods would run here, where nothing observes them
            raise TypeError(f"the forward returned a tensor subclass ({', '.join(foreign)}), not a plain tensor")
        outs = differentiable(out)
        carried = [o for o in outs if o.requires_grad]
        if not carried:
            raise RuntimeError(
                "no output carries a gradient: the forward's results are not connected to autograd (a forward-only "
                "kernel, or outputs built outside a torch.autograd.Function); this operator is checked for training"
            )
        held = [(f"input {k}", x) for k, x in enumerate(inputs) if isinstance(x, torch.Tensor)]
        if again is not None:
            first = upstream(carried, again, "dense", scale, spread)
            with observed([(f"upstream gradient {k}", g) for k, g in enumerate(first)] + held):
                torch.autograd.grad(carried, tensors, first, allow_unused=True, retain_graph=True)
        grads_out = upstream(carried, seed, layout, scale, spread, holes)
        if second is not None and not constant:  # a penalty's upstream gradient depends on the outputs (nonlinear)
            grads_out = [g.detach().requires_grad_(True) for g in grads_out]
        if accumulate and second is None:
            return names, accumulated(carried, tensors, grads_out, seed, observed, held), [o.detach() for o in outs]
        with observed([(f"upstream gradient {k}", g) for k, g in enumerate(grads_out)] + held):
            grads = list(
                torch.autograd.grad(carried, tensors, grads_out, allow_unused=True, create_graph=second is not None)
            )
        if second is not None:

            def built(first: list[torch.Tensor | None]) -> tuple[list[str], list[Any], list[torch.Tensor]]:
                """The first-order gradients as built (detached), their names and the outputs: judged when the
                second order is refused or missing."""
                return names, [g.detach() if g is not None else None for g in first], [o.detach() for o in outs]

            chosen = [
                k
                for k, n in enumerate(names)
                if (n in wanted if wanted is not None else grads[k] is not None and grads[k].requires_grad)
            ]
            loose = [names[k] for k in chosen if grads[k] is None or not grads[k].requires_grad]
            if loose:
                raise DetachedSecondOrder(loose, built(grads))
            if not chosen:
                return [], [], [o.detach() for o in outs]
            firsts_all = list(grads)
            firsts = [grads[k] for k in chosen]
            cotangents = upstream(firsts, second)
            # a whole backward, as loss.backward() runs one: every node of the gradients' graph runs (a refusal such
            # as once_differentiable's sits on a node no target depends on); the targets' .grad are the result
            watched = tensors + grads_out
            saved = [t.grad if t.is_leaf else None for t in watched]
            for t in watched:
                t.grad = None
                if not t.is_leaf:
                    t.retain_grad()
            try:
                with observed([(f"cotangent {k}", c) for k, c in enumerate(cotangents)] + held):
                    try:
                        torch.autograd.backward(firsts, cotangents)
                    except Exception as exc:  # refused where it is reached (once_differentiable's lazy error)
                        raise RefusedSecondOrder(exc, built(firsts_all)) from exc
                grads = [t.grad for t in watched]
            finally:
                for t, g in zip(watched, saved, strict=True):
                    t.grad = g
            # the first-order gradients built under create_graph are judged too (a gradient penalty reads them)
            grads = [g.detach() if g is not None else None for g in firsts_all] + grads
            names = names + [f"{n} (second order)" for n in names]
            names += [f"upstream gradient {k} (second order)" for k in range(len(grads_out))]
    return names, grads, [o.detach() for o in outs]


def accumulated(
    carried: list[torch.Tensor],
    tensors: list[torch.Tensor],
    grads_out: list[torch.Tensor],
    seed: int,
    observed: Callable[[list[tuple[str, torch.Tensor]]], Any],
    held: list[tuple[str, torch.Tensor]],
) -> list[torch.Tensor | None]:
    """compute()'s `accumulate`: the backward runs while every leaf target's .grad holds values (drawn from `seed`
    + 1), as under gradient accumulation; each gradient is what loss.backward() would add to .grad: the one
    returned plus whatever the backward itself wrote into .grad (in fp64). torch.autograd.grad, so that autograd's
    own accumulation (an add_ outside the candidate's code) stays out of the op log; the .grad put back as they
    were. A target that is not a leaf (a view of one) has no .grad of its own: its gradient is the one returned."""
    leaves = [t for t in tensors if t.is_leaf]
    saved = [t.grad for t in leaves]
    before = dict(zip(map(id, leaves), upstream(leaves, seed + 1), strict=True))
    try:
        for t in leaves:
            t.grad = before[id(t)].clone()
        with observed([(f"upstream gradient {k}", g) for k, g in enumerate(grads_out)] + held):
            got = torch.autograd.grad(carried, tensors, grads_out, allow_unused=True)
        found: list[torch.Tensor | None] = []
        for g, t in zip(got, tensors, strict=True):
            if id(t) not in before:
                found.append(g)
                continue
            now, b = t.grad, before[id(t)]
            if now is not None and type(now) is not torch.Tensor:
                raise TypeError(f"the backward replaced a .grad with a {type(now).__name__}")
            written = (now.detach().double() if now is not None else 0.0) - b.double()
            if g is None and now is not None and bool((written == 0).all()):
                found.append(None)
                continue
            total = (g.detach().double() if g is not None else 0.0) + written
            found.append(total.to(t.dtype))
        return found
    finally:
        for t, g in zip(leaves, saved, strict=True):
            t.grad = g
