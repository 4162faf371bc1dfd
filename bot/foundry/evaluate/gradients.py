"""Gradients for training operators (an operator file's `FOUNDRY_TRAINING = True`): the same computation on both
sides of the check. The evaluator runs it on the reference (in working precision and in fp64, for the noise slack);
the worker runs it on the candidate, forward and backward each under the runtime guard's op log. Each check call
draws its upstream gradients from a seed the evaluator picks per candidate; the gradients asked for are those of
every floating input (made to require grad) and of every parameter, by the reference's state names (the
candidate's state is loaded from the reference's state dict, strictly, so the names are the same). Taken with
torch.autograd.grad, so nothing accumulates into `.grad` and no earlier call's gradients are read (but in the
accumulate calls, which pre-fill .grad: one through torch.autograd.grad, one through loss.backward()).

Imports torch only (the worker imports this before candidate code runs)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import torch

# how an upstream gradient is held (upstream())
ROW_TAIL = 1.5  # a row-spread upstream: values times exp(t * z_j) per column j, t below this (heavy-tailed rows)
LAYOUTS = ("dense", "strided", "padded", "expanded", "permuted", "rows", "broadcast")


def upstream(
    outputs: list[torch.Tensor],
    seed: int,
    layout: str = "dense",
    scale: float = 1.0,
    spread: tuple[float, ...] | None = None,
    holes: bool = False,
) -> list[torch.Tensor]:
    """One normal upstream gradient per output (standard deviation `scale`: a mean over a large batch hands back values
    far below 1, a loss scaler far above), drawn from `seed` on the first output's device (the same draw on either
    side of the check, which run on one device; on a GPU the draw costs no host time), in each output's dtype, on its
    device. `layout`: "dense" (contiguous), "strided" (every other
    element of a buffer twice as wide: what a transposed or sliced use downstream hands back), "padded" (rows in a
    buffer twice as wide, unit inner stride: what a concatenation downstream hands back), "expanded" (one value
    broadcast with stride 0: what `y.sum().backward()` hands back) or "permuted" (the first two dimensions swapped
    in memory: what `y.transpose(0, 1)` downstream hands back; dense below 2-d) or "rows" (one value per row
    broadcast along the last dimension, strides (..., 1, 0): what `y.sum(-1)` or `y.mean(-1)` downstream hands back;
    expanded at 1-d) or "broadcast" (stride 0 in a drawn set of dimensions that is neither all of them nor the last
    alone, the others dense: what `y.sum(0)` (strides (0, 1)) or `y.sum(1)` of a 3-d output (strides (n, 0, 1))
    downstream hands back; expanded at 1-d). `spread` (lo, hi): each value's size drawn apart, log-uniform between
    10**lo and 10**hi and stratified (the exponent's range cut into as many equal bands as values, one value in
    each, in a random order), its sign at random: a threshold on |dy| anywhere in that range is crossed within the
    call, however few values it holds; (lo, hi, 1): each row's size apart instead (stratified over the rows as above),
    and heavy tails along the rows (the values times exp(t * z_j), z_j normal per column j, t drawn below ROW_TAIL:
    a few outputs with large gradients in every row, while each column's values stay normal across the rows and
    cancel in a reduction over them): a loss whose per-example gradients differ in size (a weighted or hard-example
    loss, a classifier's confident rows beside its wrong ones) and whose outputs matter unequally. `holes`: exact
    zeros, about a quarter of the rows (a masked or padded loss), a quarter of the slices along the last dimension
    (columns: a loss on `y[..., :k]`, a split with a piece unused) and, past 2-d, along one drawn dimension between,
    and an eighth of the other values (a ReLU or dropout downstream); rows and slices of the drawn buffer, which are
    the output's except when permuted (at least one of each in the output)."""
    generator, on = drawing(outputs, seed)

    def draw(shape: tuple[int, ...], o: torch.Tensor, step: int = 1) -> torch.Tensor:
        """`step`: the drawn buffer's last dimension holds the output's every step-th column (strided: 2) or its
        first half (padded: -1)."""
        values = torch.randn(shape, generator=generator, dtype=torch.float64, device=on) * scale
        if spread is not None and len(spread) > 2 and spread[2] and len(shape) >= 1:  # a size per row
            count = math.prod(shape[:-1])
            bands = torch.randperm(count, generator=generator, device=on).double()
            bands = (bands + torch.rand(count, generator=generator, dtype=torch.float64, device=on)) / max(count, 1)
            exponents = bands.reshape(*shape[:-1], 1) * (spread[1] - spread[0]) + spread[0]
            tail = float(torch.rand((), generator=generator, dtype=torch.float64, device=on)) * ROW_TAIL
            columns = torch.randn(shape[-1], generator=generator, dtype=torch.float64, device=on)
            values = values * torch.pow(10.0, exponents) * torch.exp(tail * columns)
        elif spread is not None:
            count = values.numel()
            bands = torch.randperm(count, generator=generator, device=on).double()
            bands = (bands + torch.rand(count, generator=generator, dtype=torch.float64, device=on)) / max(count, 1)
            exponents = bands.reshape(shape) * (spread[1] - spread[0]) + spread[0]
            values = torch.where(values < 0, -scale, scale) * torch.pow(10.0, exponents)
        if holes and len(shape) >= 1:
            rows = torch.rand((*shape[:-1], 1), generator=generator, dtype=torch.float64, device=on) < 0.25
            rows.view(-1)[torch.randint(rows.numel(), (1,), generator=generator, device=on)] = True  # at least one row
            scattered = torch.rand(shape, generator=generator, dtype=torch.float64, device=on) < 0.125
            zero = rows | scattered
            inner = [d for d in range(1, len(shape)) if shape[d] > 1]
            last = len(shape) - 1
            middle = [d for d in inner if d != last]
            chosen = [last] if last in inner else []  # zero columns (features no loss term reaches), and past 2-d
            if middle:  # whole slices along one drawn dimension between too
                chosen.append(middle[int(torch.randint(len(middle), (1,), generator=generator, device=on))])
            for d in chosen:
                seen = shape[d] // 2 if d == last and step != 1 else shape[d]
                at = int(torch.randint(seen, (1,), generator=generator, device=on))
                at = at * step if d == last and step > 1 else at
                size = [1] * len(shape)
                size[d] = shape[d]
                slices = torch.rand(size, generator=generator, dtype=torch.float64, device=on) < 0.25
                slices.view(-1)[at] = True  # at least one slice the output holds
                if bool(slices.all()):  # not every one: the gradients are not all zero
                    slices.view(-1)[(at + 1) % shape[d]] = False
                zero = zero | slices
            values = values.masked_fill(zero, 0.0)
        return values.to(dtype=o.dtype, device=o.device)

    drawn = []
    for o in outputs:
        if layout == "expanded" or (layout == "broadcast" and o.dim() < 2):
            drawn.append(draw((), o).expand(o.shape))
        elif layout == "broadcast":  # a bit per dimension of stride 0: not none, not all, not the last alone
            sets = [s for s in range(1, 2 ** o.dim() - 1) if s != 1 << (o.dim() - 1)]
            chosen = sets[int(torch.randint(len(sets), (1,), generator=generator, device=on))]
            shape = tuple(1 if chosen >> d & 1 else n for d, n in enumerate(o.shape))
            drawn.append(draw(shape, o).expand(o.shape))
        elif layout in ("strided", "padded") and o.dim() >= 1 and o.numel() > 0:
            wide = draw((*o.shape[:-1], 2 * o.shape[-1]), o, 2 if layout == "strided" else -1)
            drawn.append(wide[..., ::2] if layout == "strided" else wide[..., : o.shape[-1]])
        elif layout == "permuted" and o.dim() >= 2:
            drawn.append(draw((o.shape[1], o.shape[0], *o.shape[2:]), o).transpose(0, 1))
        elif layout == "rows" and o.dim() >= 1:
            drawn.append(draw((*o.shape[:-1], 1), o).expand(o.shape))
        else:
            drawn.append(draw(tuple(o.shape), o))
    return drawn


def drawing(tensors: list[torch.Tensor], seed: int) -> tuple[torch.Generator, torch.device]:
    """A generator seeded with `seed` on the first tensor's device (the CPU's where there is none) and that device:
    each side of the check draws there, so both get the same values."""
    on = tensors[0].device if tensors else torch.device("cpu")
    return torch.Generator(device=on).manual_seed(seed), on


def degenerate(inputs: list[Any], seed: int | None) -> list[Any]:
    """`inputs` with degenerate rows and features, drawn from `seed`: in every floating input of two or more
    dimensions a quarter of the rows (last-dimension slices; one at least) zero (padding rows, masked tokens: a
    norm's backward divides by a statistic that is zero there), and in the first one a feature zero throughout
    (dim 1, the channels, or the last dimension of a 3-d input: a dead ReLU channel; a batch norm's variance is zero
    there). The inputs as they are where `seed` is None. Each side of the check makes the
    same ones."""
    if seed is None:
        return inputs
    out = list(inputs)
    first = True
    for i, x in enumerate(out):
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2 and x.numel():
            changed = x.detach().contiguous().clone()
            flat = changed.view(-1, x.shape[-1])
            generator, on = drawing([flat], seed + i)
            picked = torch.randperm(flat.shape[0], generator=generator, device=on)[: max(1, flat.shape[0] // 4)]
            flat[picked.to(flat.device)] = 0
            if first:
                dim = -1 if x.dim() == 3 else 1
                k = int(torch.randint(x.shape[dim], (1,), generator=generator, device=on))
                changed.select(dim, k).zero_()
                first = False
            out[i] = changed
    return out


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


class RefusedInPlace(RuntimeError):
    """A call that changed a tensor in place after the forward (its output, or its inputs and parameters: compute's
    `mask` and `modify`) raised there or in its backward: autograd's own refusal (a view output of a custom
    Function, a saved tensor modified) is loud, and allowed; only gradients that come back are judged."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(type(cause).__name__)
        self.cause = cause


@contextlib.contextmanager
def grads_placed(leaves: list[torch.Tensor], values: list[torch.Tensor]) -> Any:
    """Each leaf's .grad set to its value for the block, and put back as it was after."""
    originals = [t.grad for t in leaves]
    for t, g in zip(leaves, values, strict=True):
        t.grad = g
    try:
        yield
    finally:
        for t, g in zip(leaves, originals, strict=True):
            t.grad = g


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
    spread: tuple[float, ...] | None = None,
    holes: bool = False,
    accumulate: bool | str = False,
    constant: bool = False,
    second_layout: str = "dense",
    mask: int | None = None,
    in_place: bool = False,
    modify: int | None = None,
    unused: list[int] | None = None,
    quiet: bool | str = False,
) -> tuple[list[str], list[torch.Tensor | None], list[torch.Tensor]]:
    """The gradients of sum(output * upstream) for every target, None where an output does not depend on it, and the
    forward's floating outputs. `forward` gives a context for the forward, `backward` one for each backward given
    the tensors it must leave unchanged, by name (the upstream gradients and the inputs): the worker's op log and
    poison. `inputs` come from with_grad (leaves, or outputs of ops on leaves). `scale`, `spread`: the upstream
    gradients' size (upstream()). `again`: first a backward through the same graph from another draw (seed `again`,
    retain_graph=True, its result dropped), as a second loss through the same layer has it. `second`: the derivative
    of those gradients instead (create_graph=True, then a vector-Jacobian product from the draw `second`, in
    `second_layout`, of the gradients named in `wanted`, by default of every one that carries a graph): the
    gradients are then the first-order ones (as built under create_graph) followed by the second-order ones of the
    targets and of the upstream gradients; raises DetachedSecondOrder where a wanted gradient carries none,
    RefusedSecondOrder where the second backward raises (both carry the first-order gradients). `constant`: under
    `second`, upstream gradients that do not require grad (a gradient penalty on `y.sum()`), not ones that do (a
    nonlinear loss). `holes`: exact zeros in the upstream gradients (upstream()). `accumulate`: the backward runs
    while the targets' .grad already hold values (gradient accumulation; accumulated()): "grad" through
    torch.autograd.grad (True too), "backward" as loss.backward() runs it. `mask`: the outputs are multiplied in
    place by a mask drawn from `mask` (dropout's, scaled) before the backward, under no_grad, where `in_place` (the
    candidate's side; the reference's gradients are the forward's: autograd does not track the change). `modify`:
    every floating input and parameter changes in place (a draw from `modify` added under no_grad, as an optimizer
    step or an in-place residual) between the forward and the backward, and is put back after: where autograd allows
    it the gradients are those of the forward that ran (the reference's, computed without the change). Under `mask`
    or `modify`, an exception from the in-place change or the backward is RefusedInPlace. `unused`: the outputs
    (indices among those that carry a gradient) the loss leaves out, where some remain: autograd hands the
    backward None or zeros for them. `quiet`: the forward alone with autograd off (batch statistics re-estimated
    in train mode under no_grad, as swa_utils.update_bn and test-time adaptation run them; "inference": under
    torch.inference_mode on inference tensors): no gradients, the forward's floating outputs. Raises what the model
    raises, and RuntimeError where no floating output carries a gradient (a forward-only kernel, or a fast path that
    leaves autograd)."""

    names, tensors = targets(model, inputs)

    def observed(kept: list[tuple[str, torch.Tensor]]) -> Any:
        return backward(kept) if backward is not None else contextlib.nullcontext()

    # under gradient accumulation the .grad already hold the last micro-batch's values when the forward runs (a
    # forward that looks at them decides as use has it): the same values accumulated() places before the backward
    leaves = [t for t in tensors if t.is_leaf] if accumulate and not quiet else []
    with grads_placed(leaves, upstream(leaves, seed + 1, scale=scale) if leaves else []):
        quieted = torch.inference_mode() if quiet == "inference" else torch.no_grad()
        with quieted if quiet else torch.enable_grad():
            if quiet == "inference":  # inference tensors, as a model served or recalibrated under inference_mode gets
                inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            with forward() if forward is not None else contextlib.nullcontext():
                out = model(*inputs)
            returned = list(out) if isinstance(out, (tuple, list)) else [out]
            foreign = [
                type(o).__name__ for o in returned if isinstance(o, torch.Tensor) and type(o) is not torch.Tensor
            ]
            if foreign:  # its methods would run here, where nothing observes them
                raise TypeError(f"the forward returned a tensor subclass ({', '.join(foreign)}), not a plain tensor")
            outs = differentiable(out)
        if quiet:
            return [], [], [o.detach().clone() for o in outs]
        with torch.enable_grad():
            carried = [o for o in outs if o.requires_grad]
            if not carried:
                raise RuntimeError(
                    "no output carries a gradient: the forward's results are not connected to autograd (a forward-only "
                    "kernel, or outputs built outside a torch.autograd.Function); this operator is checked for training"
                )
            loud = mask is not None or modify is not None
            forwarded = [o.detach().clone() for o in outs] if loud else [o.detach() for o in outs]
            restore: list[tuple[torch.Tensor, torch.Tensor]] = []
            try:
                if mask is not None:
                    carried = masked(carried, mask, in_place)
                if modify is not None:
                    restore = modified(model, inputs, modify)
                names, grads = backwards(
                    names,
                    tensors,
                    inputs,
                    carried,
                    seed,
                    observed,
                    layout,
                    scale,
                    again,
                    second,
                    wanted,
                    spread,
                    holes,
                    accumulate,
                    constant,
                    second_layout,
                    forwarded,
                    unused,
                )
            except (DetachedSecondOrder, RefusedSecondOrder):
                raise
            except Exception as exc:
                if loud:
                    raise RefusedInPlace(exc) from exc
                raise
            finally:
                with torch.no_grad():
                    for t, kept in restore:
                        t.copy_(kept)
        return names, grads, forwarded


def masked(carried: list[torch.Tensor], seed: int, in_place: bool) -> list[torch.Tensor]:
    """compute()'s `mask`: each output times a dropout mask (three quarters kept, scaled by 4/3), in place under
    no_grad (autograd does not track it, so nothing but the candidate's own code runs in the backward: the
    gradients are the forward's, and a backward reading its saved output must see the change); the reference's
    side (not `in_place`) leaves the outputs as they are."""
    if not in_place:
        return carried
    generator, on = drawing(carried, seed)
    with torch.no_grad():
        for o in carried:
            keep = torch.rand(o.shape, generator=generator, dtype=torch.float64, device=on) < 0.75
            o.mul_((keep.double() / 0.75).to(o.dtype).to(o.device))
    return carried


def modified(model: torch.nn.Module, inputs: list[Any], seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """compute()'s `modify`: every floating input and parameter changed in place under no_grad (a normal draw
    added); returns each with a copy of its values before, to put back."""
    chosen = [x for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
    chosen += [p for p in model.parameters() if p.is_floating_point()]
    generator, on = drawing(chosen, seed)
    kept = []
    with torch.no_grad():
        for t in chosen:
            kept.append((t, t.detach().clone()))
            t.add_(torch.randn(t.shape, generator=generator, dtype=torch.float64, device=on).to(t.dtype).to(t.device))
    return kept


def backwards(
    names: list[str],
    tensors: list[torch.Tensor],
    inputs: list[Any],
    carried: list[torch.Tensor],
    seed: int,
    observed: Callable[[list[tuple[str, torch.Tensor]]], Any],
    layout: str,
    scale: float,
    again: int | None,
    second: int | None,
    wanted: list[str] | None,
    spread: tuple[float, ...] | None,
    holes: bool,
    accumulate: bool | str,
    constant: bool,
    second_layout: str,
    outs: list[torch.Tensor],
    unused: list[int] | None = None,
) -> tuple[list[str], list[torch.Tensor | None]]:
    """compute()'s backward half, from the outputs that carry a gradient: the names and the gradients. Under
    `again`, the earlier backward's gradients follow, read after the later one ran (named "... (earlier
    backward)"): a second backward through the same graph must leave what the first returned as it was (PCGrad,
    GradNorm and a Jacobian's rows keep several gradients of one graph)."""
    held = [(f"input {k}", x) for k, x in enumerate(inputs) if isinstance(x, torch.Tensor)]
    earlier: list[torch.Tensor | None] | None = None
    if again is not None:
        first = upstream(carried, again, "dense", scale, spread)
        with observed([(f"upstream gradient {k}", g) for k, g in enumerate(first)] + held):
            earlier = list(torch.autograd.grad(carried, tensors, first, allow_unused=True, retain_graph=True))
    names, grads = later_backward(
        names, tensors, carried, seed, observed, held, layout, scale, second, wanted, spread, holes, accumulate,
        constant, second_layout, outs, unused,
    )  # fmt: skip
    if earlier is not None:
        names = names + [f"{n} (earlier backward)" for n in names[: len(earlier)]]
        grads = grads + [g.detach() if g is not None else None for g in earlier]
    return names, grads


def later_backward(
    names: list[str],
    tensors: list[torch.Tensor],
    carried: list[torch.Tensor],
    seed: int,
    observed: Callable[[list[tuple[str, torch.Tensor]]], Any],
    held: list[tuple[str, torch.Tensor]],
    layout: str,
    scale: float,
    second: int | None,
    wanted: list[str] | None,
    spread: tuple[float, ...] | None,
    holes: bool,
    accumulate: bool | str,
    constant: bool,
    second_layout: str,
    outs: list[torch.Tensor],
    unused: list[int] | None = None,
) -> tuple[list[str], list[torch.Tensor | None]]:
    """backwards() from the call's own upstream gradients (after any earlier backward through the graph)."""
    grads_out = upstream(carried, seed, layout, scale, spread, holes)
    kept = [k for k in range(len(carried)) if k not in (unused or ())]
    if kept and len(kept) < len(carried):  # never none: then every output is in the loss
        carried, grads_out = [carried[k] for k in kept], [grads_out[k] for k in kept]
    if second is not None and not constant:  # a penalty's upstream gradient depends on the outputs (nonlinear)
        grads_out = [g.detach().requires_grad_(True) for g in grads_out]
    if accumulate and second is None:
        how = "backward" if accumulate == "backward" else "grad"
        return names, accumulated(carried, tensors, grads_out, seed, observed, held, how, scale, names)
    with observed([(f"upstream gradient {k}", g) for k, g in enumerate(grads_out)] + held):
        grads = list(
            torch.autograd.grad(carried, tensors, grads_out, allow_unused=True, create_graph=second is not None)
        )
    if second is None:
        return names, grads

    def built(first: list[torch.Tensor | None]) -> tuple[list[str], list[Any], list[torch.Tensor]]:
        """The first-order gradients as built (detached), their names and the outputs: judged when the second
        order is refused or missing."""
        return names, [g.detach() if g is not None else None for g in first], outs

    chosen = [
        k
        for k, n in enumerate(names)
        if (n in wanted if wanted is not None else grads[k] is not None and grads[k].requires_grad)
    ]
    loose = [names[k] for k in chosen if grads[k] is None or not grads[k].requires_grad]
    if loose:
        raise DetachedSecondOrder(loose, built(grads))
    if not chosen:
        return [], []
    firsts_all = list(grads)
    firsts = [grads[k] for k in chosen]
    cotangents = upstream(firsts, second, second_layout)
    # a whole backward, as loss.backward() runs one: every node of the gradients' graph runs (a refusal such as
    # once_differentiable's sits on a node no target depends on); the targets' .grad are the result
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
    return names, grads


def accumulated(
    carried: list[torch.Tensor],
    tensors: list[torch.Tensor],
    grads_out: list[torch.Tensor],
    seed: int,
    observed: Callable[[list[tuple[str, torch.Tensor]]], Any],
    held: list[tuple[str, torch.Tensor]],
    how: str = "grad",
    scale: float = 1.0,
    names: list[str] | None = None,
) -> list[torch.Tensor | None]:
    """compute()'s `accumulate`: the backward runs while every leaf target's .grad holds values (drawn from `seed`
    + 1, of the upstream gradients' size), as under gradient accumulation, each path as torch defines it. "grad":
    torch.autograd.grad, which returns the whole gradient and leaves .grad as it was: the gradients are the ones
    returned, and the .grad are among the tensors the backward must leave unchanged (a kernel adding into .grad
    there double counts at the next step). "backward": what loss.backward() adds to .grad: the gradient returned
    plus whatever the backward itself wrote into .grad (in fp64); run through torch.autograd.grad too, so that
    autograd's own accumulation (an add_ outside the candidate's code) stays out of the op log. The .grad put back
    as they were after. A target that is not a leaf (a view of one) has no .grad of its own: its gradient is the
    one returned."""
    leaves = [t for t in tensors if t.is_leaf]
    saved = [t.grad for t in leaves]
    before = dict(zip(map(id, leaves), upstream(leaves, seed + 1, scale=scale), strict=True))
    placed: dict[int, torch.Tensor] = {}
    called = names or [f"target {k}" for k in range(len(tensors))]
    try:
        for t in leaves:  # the .grad compute() placed before the forward, the same object (a forward may hold it)
            there = t.grad
            kept_there = there is not None and type(there) is torch.Tensor and there.shape == before[id(t)].shape
            if kept_there and bool(torch.equal(there, before[id(t)])):
                placed[id(t)] = there
            t.grad = placed.setdefault(id(t), before[id(t)].clone())
        kept = [(f"upstream gradient {k}", g) for k, g in enumerate(grads_out)] + held
        if how == "grad":
            kept += [(f"the .grad of {called[k]}", placed[id(t)]) for k, t in enumerate(tensors) if id(t) in placed]
        with observed(kept):
            got = torch.autograd.grad(carried, tensors, grads_out, allow_unused=True)
        found: list[torch.Tensor | None] = []
        for k, (g, t) in enumerate(zip(got, tensors, strict=True)):
            if id(t) not in before:
                found.append(g)
                continue
            now, b = t.grad, before[id(t)]
            if now is not None and type(now) is not torch.Tensor:
                raise TypeError(f"the backward replaced a .grad with a {type(now).__name__}")
            if how == "grad":
                if now is not placed[id(t)]:
                    raise RuntimeError(f"the backward replaced the .grad of {called[k]} under torch.autograd.grad")
                found.append(g)
                continue
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
