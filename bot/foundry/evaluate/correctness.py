"""Compare candidate outputs with reference outputs; probe trivial answers to strengthen weak checks.

Runs in the parent: the candidate's process never sees reference outputs."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import torch

from foundry.core.records import Diagnosis, FailureKind, Stage


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    # Per element, an allowance on top of atol + rtol * |ref| (same shape as the reference, or None): the rounding
    # an fp computation of this element may commit, from the magnitudes it sums (evaluator.rounding_slack).
    slack: torch.Tensor | None = field(default=None, compare=False, repr=False)
    # Per element (same shape as the reference, bool, or None): where the reference carries its value to
    # SIGNIFICANT_RTOL of the same computation in fp64 (a normal number, finite): there the output must keep it
    # to within LOST of itself, however far below atol it lies (evaluator.rounding_slack)
    significant: torch.Tensor | None = field(default=None, compare=False, repr=False)


# An element the reference computes to 3 significant digits (of fp64's value) must not lose more than a quarter of
# it: a softmax tail, a sigmoid far from 0 or an expm1 near 0 flushed to 0 (or rounded to a power of 2) stays below
# any atol, yet a log, a ratio or a product downstream reads it. Judged only above SIGNIFICANT_FLOOR epsilons of the
# output's largest value: an honest formula's rounding is a few epsilons of the magnitudes it works at (log(1 + e^x)
# for softplus is 0 where the reference keeps 1e-19 beside outputs of 1e3), so there it stays within a quarter.
SIGNIFICANT_RTOL = 1e-3
SIGNIFICANT_FLOOR = 64
LOST = 0.25
# Refused from this many lost elements: 1, and one more per LOST_PER elements. An element whose result cancels to far
# below its terms (a matmul output near 0) is noise in both, yet the reference may land on fp64's value by chance;
# at 32M elements that happens about once in a hundred trials, and never nine times in one.
LOST_PER = 1 << 22


def index_text(flat: int, shape: torch.Size) -> str:
    if not shape:
        return "()"
    idx = []
    for size in reversed(shape):
        idx.append(flat % size)
        flat //= size
    return "(" + ", ".join(str(i) for i in reversed(idx)) + ")"


CHUNK = 1 << 24  # elements compared at a time where the outputs are larger (fp64 copies of 128 MB each)


def compare(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, *, kind: FailureKind, what: str) -> Diagnosis | None:
    """None when out matches ref within tolerance; otherwise a Diagnosis with mismatch statistics. Floating
    outputs larger than CHUNK elements are checked a chunk at a time first (the fp64 copies and masks of a
    whole 512 MB output come to ~5 GB, per candidate being judged); only a failing output is compared whole,
    for its statistics."""
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return Diagnosis(
            stage=Stage.CORRECTNESS,
            kind=FailureKind.SHAPE_MISMATCH,
            rule="shape_dtype",
            message=f"{what}: got {tuple(out.shape)} {out.dtype}, expected {tuple(ref.shape)} {ref.dtype}",
        )
    if ref.is_complex():  # both parts judged (a cast to a real dtype keeps the real part only)
        slack = tol.slack
        if slack is not None and slack.shape == ref.shape:
            slack = slack.abs().unsqueeze(-1).expand(*ref.shape, 2)
            tol = dataclasses.replace(tol, slack=slack.to(torch.view_as_real(ref).dtype))
        return compare(
            torch.view_as_real(out.resolve_conj()), torch.view_as_real(ref.resolve_conj()), tol, kind=kind, what=what
        )
    if not (ref.is_floating_point() or ref.is_complex()):
        bad = out != ref
        if not bool(bad.any()):
            return None
        n = int(bad.sum())
        first = int(bad.flatten().nonzero()[0])
        return Diagnosis(
            stage=Stage.CORRECTNESS,
            kind=kind,
            rule="exact",
            message=f"{what}: {n} of {ref.numel()} elements differ; first at {index_text(first, ref.shape)}: "
            f"got {out.flatten()[first].item()}, expected {ref.flatten()[first].item()}",
            metrics={"mismatch_fraction": n / max(ref.numel(), 1)},
        )
    if ref.numel() > CHUNK:
        sums = chunked_sums(out, ref, tol)
        if sums is not None:  # every element within tolerance
            sq_err, sq_ref, finite = sums
            return rms_check(sq_err, sq_ref, finite, ref.numel(), tol, kind, what)
    o = out.detach().to(torch.float64).flatten()
    r = ref.detach().to(torch.float64).flatten()
    s = slack_of(tol, ref)
    poisoned = unwritten(o, r)
    if bool(poisoned.any()):
        n = int(poisoned.sum())
        first = int(poisoned.nonzero()[0])
        return Diagnosis(
            stage=Stage.CORRECTNESS,
            kind=FailureKind.INCOMPLETE_OUTPUT if kind is FailureKind.MISMATCH else kind,
            rule="coverage",
            message=f"{what}: {n} of {r.numel()} elements are NaN where the reference is not "
            f"(never written, or computed from poisoned memory); first at {index_text(first, ref.shape)}",
            metrics={"unwritten_fraction": n / max(r.numel(), 1)},
        )
    err, bad = elementwise(o, r, tol, s)
    if not bool(bad.any()):
        gone = lost(o, r, significant_of(tol, ref))
        if gone is not None and int(gone.sum()) >= min_lost(r.numel()):
            return lost_diagnosis(o, r, gone, ref.shape, kind, what)
        return relative_rms(o, r, err, tol, kind, what, s)
    n = int(bad.sum())
    worst = int(torch.where(bad, err, torch.zeros_like(err)).argmax())
    first = int(bad.nonzero()[0])
    finite_err = err[torch.isfinite(err)]
    return Diagnosis(
        stage=Stage.CORRECTNESS,
        kind=kind,
        rule="tolerance",
        message=(
            f"{what}: {n} of {r.numel()} elements ({100 * n / r.numel():.3g}%) outside atol={tol.atol:g} "
            f"rtol={tol.rtol:g}; worst at {index_text(worst, ref.shape)}: got {o[worst].item():.6g}, expected "
            f"{r[worst].item():.6g}; first at {index_text(first, ref.shape)}"
        ),
        metrics={
            "max_abs_err": float(finite_err.max()) if finite_err.numel() else float("inf"),
            "mean_abs_err": float(finite_err.mean()) if finite_err.numel() else float("inf"),
            "mismatch_fraction": n / r.numel(),
            "atol": tol.atol,
            "rtol": tol.rtol,
        },
    )


@dataclass(frozen=True)
class Selection:
    """An integer output that is the indices an unstable sort or a topk chose (torch's order among tied values is
    its implementation's: std::sort past 16 elements, nth_element for topk, another on each device): the values it
    sorted, along `dim`. Such indices are right when they select the reference's values, each index once."""

    source: torch.Tensor
    dim: int
    op: str  # "sort" or "topk", for the message


def compare_selection(
    out: torch.Tensor, ref: torch.Tensor, sel: Selection, *, kind: FailureKind, what: str
) -> Diagnosis | None:
    """None when `out` equals `ref`, or when it is another answer the unstable op could give: indices in range,
    none twice along the sorted dim, and selecting the same values as the reference's indices in the same places
    (NaN as NaN; -0.0 and 0.0 are a tie, as the sort has them). Otherwise the exact comparison's diagnosis, told
    what was allowed."""
    exact = compare(out, ref, Tolerance(0.0, 0.0), kind=kind, what=what)
    if exact is None or exact.rule != "exact":
        return exact
    source, dim = sel.source.to(out.device), sel.dim % max(out.dim(), 1)
    n = source.shape[dim] if source.dim() else 1
    if out.dim() != source.dim() or any(out.shape[d] != source.shape[d] for d in range(out.dim()) if d != dim):
        return exact
    inside = (out >= 0) & (out < n)
    if not bool(inside.all()):
        return exact
    if bool((out.sort(dim=dim).values.diff(dim=dim) == 0).any()):
        return exact.model_copy(update={"message": f"{exact.message} (an index chosen twice along dim {dim})"})
    got, want = source.gather(dim, out), source.gather(dim, ref)
    same = (got == want) | (got.isnan() & want.isnan())
    if bool(same.all()):
        return None
    return exact.model_copy(
        update={
            "message": f"{exact.message}; the {sel.op}'s tied values may come in any order, but these indices "
            f"select other values at {int((~same).sum())} places"
        }
    )


def compare_output(
    out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, sel: Selection | None, *, kind: FailureKind, what: str
) -> Diagnosis | None:
    """One output judged: by the values it selects where it is an unstable sort's indices (`sel`), else compare."""
    if sel is not None:
        return compare_selection(out, ref, sel, kind=kind, what=what)
    return compare(out, ref, tol, kind=kind, what=what)


def slack_of(tol: Tolerance, ref: torch.Tensor) -> torch.Tensor | None:
    """tol's per-element slack, flat in fp64, where it matches ref's shape."""
    if tol.slack is None or tuple(tol.slack.shape) != tuple(ref.shape):
        return None
    return tol.slack.detach().to(device=ref.device, dtype=torch.float64).flatten().nan_to_num(0.0, 0.0, 0.0)


def significant_of(tol: Tolerance, ref: torch.Tensor) -> torch.Tensor | None:
    """tol's significance mask, flat, where it matches ref's shape."""
    if tol.significant is None or tuple(tol.significant.shape) != tuple(ref.shape):
        return None
    return tol.significant.detach().to(device=ref.device, dtype=torch.bool).flatten()


def significant(r: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """Where the reference `r` holds the fp64 computation's value `exact` to SIGNIFICANT_RTOL (or two of its own
    dtype's epsilons, for bf16), as a normal number of its dtype at least SIGNIFICANT_FLOOR epsilons of the output's
    largest finite value: the elements `lost` judges."""
    info = torch.finfo(r.dtype)
    w = exact.detach().to(device=r.device, dtype=torch.float64)
    rd = r.detach().to(torch.float64)
    rtol = max(SIGNIFICANT_RTOL, 2 * info.eps)
    finite = torch.isfinite(w) & torch.isfinite(rd)
    scale = float(w.abs().masked_fill(~finite, 0.0).max()) if w.numel() else 0.0
    floor = max(16 * info.tiny, SIGNIFICANT_FLOOR * info.eps * scale)
    return finite & (w.abs() >= floor) & ((rd - w).abs() <= rtol * w.abs())


def lost(o: torch.Tensor, r: torch.Tensor, sig: torch.Tensor | None) -> torch.Tensor | None:
    """Significant elements (flat fp64 outputs and references) the output is off by more than LOST of |reference|."""
    if sig is None or sig.numel() != r.numel():
        return None
    return sig & ((o - r).abs() > LOST * r.abs())


def min_lost(numel: int) -> int:
    """The lost elements that refuse an output of `numel` elements."""
    return 1 + numel // LOST_PER


def lost_diagnosis(
    o: torch.Tensor, r: torch.Tensor, gone: torch.Tensor, shape: torch.Size, kind: FailureKind, what: str
) -> Diagnosis:
    n = int(gone.sum())
    first = int(gone.nonzero()[0])
    zeros = int((gone & (o == 0)).sum())
    return Diagnosis(
        stage=Stage.CORRECTNESS,
        kind=kind,
        rule="significance",
        message=(
            f"{what}: {n} of {r.numel()} elements that the reference computes to {SIGNIFICANT_RTOL:g} of fp64 are off "
            f"by more than {LOST:g} of their value ({zeros} of them 0), all below atol; first at "
            f"{index_text(first, shape)}: got {o[first].item():.6g}, expected {r[first].item():.6g} (small values "
            "flushed or dropped: a softmax tail, an exp(x) - 1 near 0)"
        ),
        metrics={"lost_fraction": n / max(r.numel(), 1)},
    )


def unwritten(o: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """Where the output is NaN and the reference finite: never written (the NaN poison), or computed from
    poisoned memory. A NaN where the reference is infinite is a diverged value either way (a 3xTF32 split of an
    infinity gives inf - inf), judged by elementwise."""
    return torch.isnan(o) & torch.isfinite(r)


def elementwise(
    o: torch.Tensor, r: torch.Tensor, tol: Tolerance, slack: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Absolute errors (0 where both are NaN or the same infinity, or one is NaN and the other infinite: both
    diverged) and where they exceed atol + rtol * |ref| (+ slack, per element, where given) (or the reference
    is not finite and the output is, a diverged value laundered into a number, or the output is the opposite
    infinity), of fp64 outputs and references."""
    both_nan = torch.isnan(o) & torch.isnan(r)
    same_inf = torch.isinf(r) & (o == r)
    diverged = (torch.isnan(o) & torch.isinf(r)) | (torch.isinf(o) & torch.isnan(r))
    err = (o - r).abs()
    err = torch.where(both_nan | same_inf | diverged, torch.zeros_like(err), err)
    limit = tol.atol + tol.rtol * r.abs()
    if slack is not None:
        limit = limit + slack
    opposite = torch.isinf(r) & torch.isinf(o) & (o != r)  # -inf for +inf: |o - r| = inf is not above inf
    return err, (err > limit) | (~torch.isfinite(r) & torch.isfinite(o)) | opposite


def chunked_sums(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance) -> tuple[float, float, int] | None:
    """None when some element is poisoned (NaN where the reference is not) or outside tolerance; otherwise
    the sums relative_rms needs, over the elements where both are finite: squared errors, squared reference
    values, and their count."""
    o_flat, r_flat = out.detach().reshape(-1), ref.detach().reshape(-1)
    s_flat = tol.slack.detach().reshape(-1) if tol.slack is not None and tol.slack.shape == ref.shape else None
    sig_flat = significant_of(tol, ref)
    sq_err, sq_ref, finite_count, gone_count = 0.0, 0.0, 0, 0
    for start in range(0, r_flat.numel(), CHUNK):
        o = o_flat[start : start + CHUNK].to(torch.float64)
        r = r_flat[start : start + CHUNK].to(torch.float64)
        s = None if s_flat is None else s_flat[start : start + CHUNK].to(device=r.device, dtype=torch.float64)
        err, bad = elementwise(o, r, tol, s)
        if bool(unwritten(o, r).any()) or bool(bad.any()):
            return None
        gone = lost(o, r, None if sig_flat is None else sig_flat[start : start + CHUNK])
        gone_count += 0 if gone is None else int(gone.sum())
        if gone_count >= min_lost(r_flat.numel()):
            return None
        if s is not None:
            err = (err - s).clamp_min(0.0)
        sums = squared_sums(o, r, err)
        sq_err, sq_ref, finite_count = sq_err + sums[0], sq_ref + sums[1], finite_count + sums[2]
    return sq_err, sq_ref, finite_count


def squared_sums(o: torch.Tensor, r: torch.Tensor, err: torch.Tensor) -> tuple[float, float, int]:
    """Over the elements where output and reference are both finite: the sum of squared errors (err from
    elementwise), of squared reference values, and their count."""
    finite = torch.isfinite(r) & torch.isfinite(o)
    return float(err[finite].pow(2).sum()), float(r[finite].pow(2).sum()), int(finite.sum())


def relative_rms(
    o: torch.Tensor,
    r: torch.Tensor,
    err: torch.Tensor,
    tol: Tolerance,
    kind: FailureKind,
    what: str,
    slack: torch.Tensor | None = None,
) -> Diagnosis | None:
    """In aggregate the error must also be small relative to the signal: rms(out - ref) <= rtol * rms(ref).
    Elementwise atol alone lets outputs far below 1 keep only a digit or two (quantized, truncated). The part of
    each error within its rounding slack (where given) is excused."""
    if slack is not None:
        err = (err - slack).clamp_min(0.0)
    sq_err, sq_ref, finite = squared_sums(o, r, err)
    return rms_check(sq_err, sq_ref, finite, o.numel(), tol, kind, what)


def rms_check(
    sq_err: float, sq_ref: float, finite: int, numel: int, tol: Tolerance, kind: FailureKind, what: str
) -> Diagnosis | None:
    """relative_rms's verdict from its sums (squared errors and squared reference values over the `finite`
    elements where both are finite)."""
    if numel < 2 or finite == 0:
        return None
    ref_rms = math.sqrt(sq_ref / finite)
    err_rms = math.sqrt(sq_err / finite)
    if ref_rms == 0.0 or err_rms <= tol.rtol * ref_rms:
        return None
    return Diagnosis(
        stage=Stage.CORRECTNESS,
        kind=kind,
        rule="relative_rms",
        message=(
            f"{what}: every element is within atol={tol.atol:g}, but the error is {err_rms / ref_rms:.3g} of the "
            f"output's RMS ({err_rms:.3g} vs {ref_rms:.3g}), more than rtol={tol.rtol:g}: precision was lost"
        ),
        metrics={"relative_rms_error": err_rms / ref_rms, "rtol": tol.rtol},
    )


def trivial_answers(ref: torch.Tensor, inputs: list[object]) -> list[tuple[str, torch.Tensor]]:
    if not ref.is_floating_point():
        return [("zeros", torch.zeros_like(ref))]
    answers = [("zeros", torch.zeros_like(ref))]
    if ref.numel() > 1:  # for a scalar, "the output's mean" is the reference itself
        answers.append(("the output's mean", torch.full_like(ref, float(ref.mean()))))
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.shape == ref.shape and x.dtype == ref.dtype:
            answers.append((f"input {i}", x))
    return answers


def magnitude(ref: torch.Tensor) -> float:
    """The output's mean magnitude (non-finite values counted as 0)."""
    return float(ref.detach().abs().double().nan_to_num(0.0, 0.0, 0.0).mean()) if ref.numel() else 0.0


def strengthened(ref: torch.Tensor, tol: Tolerance, scale: float) -> Tolerance:
    """tol with atol at most `scale` × the output's mean magnitude (a floating output's; others keep tol)."""
    if not ref.is_floating_point():
        return tol
    signal = magnitude(ref)
    return Tolerance(atol=min(tol.atol, scale * signal), rtol=tol.rtol) if signal > 0 else tol


def unusable(refs: list[torch.Tensor]) -> str | None:
    """Why reference outputs cannot judge a trial of transformed inputs (None: they can): a floating output
    with a non-finite value (the inputs left the operator's domain, or overflowed its precision), or with one
    value everywhere (saturated: any constant would pass)."""
    for k, ref in enumerate(refs):
        if not (ref.is_floating_point() or ref.is_complex()):
            continue
        if not bool(torch.isfinite(ref).all()):
            return f"output {k} is not finite"
        flat = ref.detach().reshape(-1)
        if flat.numel() > 1 and bool((flat == flat[0]).all()):
            return f"output {k} holds one value everywhere"
    return None


@dataclass(frozen=True)
class ProbeResult:
    tolerances: list[Tolerance]  # per output, possibly strengthened
    notes: list[str]  # for the report
    weak: bool  # a trivial answer passes even the strengthened check


def probe(refs: list[torch.Tensor], inputs: list[object], tol: Tolerance, scale: float) -> ProbeResult:
    """Tolerances per output. atol never exceeds `scale` × the output's mean magnitude, so outputs far
    below 1 are not checked with an effectively loose relative tolerance (quantized or truncated
    results would pass a plain atol). Trivial answers (zeros, a constant, an input) are probed: the
    notes say where one passes the plain check, and `weak` where one passes even the scaled one."""
    tolerances: list[Tolerance] = []
    notes: list[str] = []
    weak = False
    for k, ref in enumerate(refs):
        if not ref.is_floating_point():
            tolerances.append(tol)
            continue
        signal = magnitude(ref)
        strong = strengthened(ref, tol, scale)
        tolerances.append(strong)
        answers = trivial_answers(ref, inputs)
        passing = [n for n, a in answers if compare(a, ref, tol, kind=FailureKind.MISMATCH, what="probe") is None]
        if not passing:
            continue
        still = [n for n, a in answers if compare(a, ref, strong, kind=FailureKind.MISMATCH, what="probe") is None]
        notes.append(
            f"output {k}: a trivial answer ({', '.join(passing)}) passes atol={tol.atol:g}; "
            f"checked with atol={strong.atol:.3g} instead (relative to the output's mean magnitude {signal:.3g})"
        )
        if still:
            weak = True
            notes.append(
                f"output {k}: even the strengthened check accepts {', '.join(still)}: "
                "verification cannot tell this operator from a trivial answer"
            )
    return ProbeResult(tolerances, notes, weak)
