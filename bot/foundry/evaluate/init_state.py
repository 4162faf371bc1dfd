"""The state a candidate's constructor makes, judged against the reference constructor's.

A training operator's module is built and trained from scratch in use: its parameters must start where the
reference's initialisers put them (kaiming-uniform for a linear layer, ones and zeros for a norm), or training starts
elsewhere (weights drawn from randn instead are sqrt(3 * fan_in) times too large, and every layer multiplies the
activations' scale). The checked calls run on the reference's state loaded into the candidate, so nothing else looks
at what its constructor made.

The worker builds the candidate INIT_DRAWS times before any state is loaded, and sends per state key a sample of
positions (drawn after the constructors ran) and each build's values there (worker.initial_states). The reference is
built as often here. A key whose reference values are the same in every build (a constant or a deterministic
initialiser, an integer counter) must come out the same. A random one must come from the same distribution, by two-
sample Kolmogorov-Smirnov tests at INIT_ALPHA over the pooled builds of: the values (and each build's values against
the reference's pooled, at INIT_ALPHA / INIT_DRAWS: one build in a few that starts elsewhere); one build's values
minus another's at the same positions, in disjoint pairs of builds (instances that all start alike, a fixed seed, have
none of the spread); per dimension, the value at an odd position along it minus the one before, pairs that share no
value (a layout that sorts an honest draw into rows that are all alike keeps the values' distribution and loses this
one); and, for a matrix sent whole (up to INIT_SAMPLE elements), its singular values over their norm (a low-rank start
with honest entries), or for a larger one those of a block of secret rows and columns (sqrt(INIT_SAMPLE) of each: a
block of a low-rank matrix is low-rank).
Two random floating keys of one shape must start as related as the reference's: by the same test over the pooled
builds of the one's values minus the other's at the positions sampled in both (at least PAIR_COMMON; a copy of one
honest draw into a second branch has none of the spread), for at most PAIR_LIMIT pairs per shape, nearest in key
order first (the branches of one block). Two matrices whose shapes are each other's transposed (an MLP's up and down
projections) by the products of one's [i, j] and the other's [j, i]: a weight tied to the other's transposed makes
their product start positive definite, the block's output aligned with its input.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from foundry.core.records import Diagnosis, FailureKind, Stage
from foundry.evaluate.worker import next_positions

INIT_DRAWS = 8  # builds of each side
INIT_SAMPLE = 1 << 14  # positions per tensor judged (all where it has fewer)
INIT_ALPHA = 1e-6  # the chance that one honest random key is refused
# elements of the state at the operator's full constructor arguments, at most, to build it too (eight builds a side
# at once: 1 GiB of fp32 each at the limit; a 4096 x 4096 layer is in, a 4096 x 11008 one and a vocabulary head not)
FULL_STATE = 1 << 25
PAIR_COMMON = 32  # positions sampled in both keys of a pair, at least, to judge their differences
PAIR_LIMIT = 64  # pairs of keys of one shape judged, at most (nearest in key order first)


def ks_statistic(a: torch.Tensor, b: torch.Tensor) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two empirical distributions."""
    a, b = torch.sort(a.double())[0], torch.sort(b.double())[0]
    points = torch.cat([a, b])
    fa = torch.searchsorted(a, points, right=True).double() / a.numel()
    fb = torch.searchsorted(b, points, right=True).double() / b.numel()
    return float((fa - fb).abs().max())


def ks_limit(n: int, m: int, alpha: float = INIT_ALPHA) -> float:
    """The statistic two samples of sizes n and m of one distribution exceed with chance about alpha."""
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def refused(text: str) -> Diagnosis:
    """The initial-state refusal, with what to do about it."""
    return Diagnosis(
        stage=Stage.CORRECTNESS,
        kind=FailureKind.MISMATCH,
        rule="initial_state",
        message=text + " (a module trained from scratch starts elsewhere than the reference: build its "
        "parameters and buffers with the reference's initialisers, e.g. nn.Linear's own, or its constructor's "
        "statements)",
    )


def initial_state(reference: list[dict[str, torch.Tensor]], candidate: Any) -> Diagnosis | None:
    """The candidate's builds (`candidate`, as sample() made it in its process: untrusted) against the reference's
    (state dicts of INIT_DRAWS builds). None where every key starts as the reference's does."""
    if not isinstance(candidate, dict) or not isinstance(candidate.get("indices"), dict):
        return refused("the candidate's process reported no initial state")
    indices, draws = candidate["indices"], candidate.get("draws")
    if not isinstance(draws, list) or len(draws) != INIT_DRAWS or not all(isinstance(d, dict) for d in draws):
        return refused(
            f"the candidate's process reported {len(draws) if isinstance(draws, list) else 0} builds, not {INIT_DRAWS}"
        )
    drawn: list[str] = []  # the random floating keys, in key order
    for key, first in reference[0].items():
        idx = indices.get(key)
        n = first.numel()
        if not isinstance(idx, torch.Tensor) or idx.dtype != torch.int64 or idx.dim() != 1 or idx.numel() == 0:
            if n == 0:
                continue
            return refused(f"{key}: no initial values reported")
        inside = int(idx.min()) >= 0 and int(idx.max()) < n
        if idx.numel() != min(n, INIT_SAMPLE) or not inside or idx.unique().numel() != idx.numel():
            return refused(f"{key}: the positions reported are not a sample of the tensor's")
        theirs = [d.get(key) for d in draws]
        if not all(isinstance(t, torch.Tensor) and t.shape == idx.shape and t.dtype == first.dtype for t in theirs):
            return refused(f"{key}: values missing, or not of the reference's dtype {first.dtype}")
        ours = [state[key].detach().reshape(-1)[idx].cpu() for state in reference]
        if all(torch.equal(o, ours[0]) for o in ours[1:]) or not first.is_floating_point():
            expected = ours[0]
            for t in theirs:
                if first.is_floating_point():
                    same = torch.isclose(t.double(), expected.double(), rtol=1e-5, atol=1e-6, equal_nan=True)
                else:
                    same = t == expected
                if not bool(same.all()):
                    at = int((~same).nonzero()[0])
                    return refused(
                        f"{key} starts at other values than the reference's initialiser gives every time: "
                        f"{t[at].item():.6g} where the reference has {expected[at].item():.6g}"
                    )
            continue
        drawn.append(key)
        mine, yours = torch.cat(ours).double(), torch.cat(theirs).double()
        if not bool(torch.isfinite(yours).all()) and bool(torch.isfinite(mine).all()):
            return refused(f"{key} starts with non-finite values (uninitialised memory?)")
        pairs = [("values", mine, yours)]
        near = neighbours(candidate, key, idx, len(first.shape))
        if near is None:
            return refused(f"{key}: the values next to the sampled positions are missing")
        for d, size in enumerate(first.shape):
            if size > 1:
                flat = [state[key].detach().reshape(-1) for state in reference]
                ahead = next_positions(idx, list(first.shape), d, torch)
                coord = (idx // math.prod(first.shape[d + 1 :])) % size
                apart = (coord % 2 == 0) & (coord < size - 1)  # pairs (even, next): no value in two of them
                mine_d = torch.cat(
                    [(f[ahead].cpu().double() - o.double())[apart] for f, o in zip(flat, ours, strict=True)]
                )
                yours_d = torch.cat([(n[d].double() - t.double())[apart] for n, t in zip(near, theirs, strict=True)])
                pairs.append((f"differences between neighbours along dimension {d}", mine_d, yours_d))
        pairs.append(("differences between builds", across(ours), across(theirs)))
        if first.dim() >= 2 and idx.numel() == n and bool((idx == torch.arange(n)).all()):  # sent whole
            matrix = (first.shape[0], n // first.shape[0])
            pairs.append(("singular values (normalised)", spectra(ours, matrix), spectra(theirs, matrix)))
        elif first.dim() >= 2 and first.is_floating_point():  # too large: a block of secret rows and columns
            block = blocks(candidate, key, first)
            if isinstance(block, str):
                return refused(f"{key}: {block}")
            (rows, cols), values = block
            matrix = [state[key].detach().reshape(first.shape[0], -1)[rows][:, cols].cpu() for state in reference]
            shape = (rows.numel(), cols.numel())
            pairs.append(
                (
                    f"singular values of a {shape[0]} x {shape[1]} block (normalised)",
                    spectra(matrix, shape),
                    spectra(values, shape),
                )
            )
        for what, a, b in pairs:
            statistic, limit = ks_statistic(a, b), ks_limit(a.numel(), b.numel())
            if statistic > limit:
                return refused(
                    f"{key} starts from another distribution than the reference's initialiser, in its {what} "
                    f"(Kolmogorov-Smirnov {statistic:.3f} > {limit:.3f} over {INIT_DRAWS} builds): mean "
                    f"{b.mean().item():.4g}, std {b.std().item():.4g}, where the reference's have mean "
                    f"{a.mean().item():.4g}, std {a.std().item():.4g}"
                )
        for b, t in enumerate(theirs):  # and each build's alone (a build in a few that starts elsewhere is diluted
            # in the pooled values): against the reference's pooled, at INIT_ALPHA shared by the builds
            statistic = ks_statistic(mine, t.double())
            limit = ks_limit(mine.numel(), t.numel(), INIT_ALPHA / INIT_DRAWS)
            if statistic > limit:
                return refused(
                    f"{key} starts from another distribution than the reference's initialiser in build {b + 1} of "
                    f"{INIT_DRAWS} (its values: Kolmogorov-Smirnov {statistic:.3f} > {limit:.3f}): mean "
                    f"{t.double().mean().item():.4g}, std {t.double().std().item():.4g}, where the reference's have "
                    f"mean {mine.mean().item():.4g}, std {mine.std().item():.4g}"
                )
    for first, second in related_pairs(reference[0], drawn):
        judged = pair_statistic(reference, draws, indices, first, second, transposed=False)
        if judged is not None and judged[0] > judged[1]:
            statistic, limit, mine, yours = judged
            return refused(
                f"{first} and {second} start related otherwise than the reference's (their differences at the same "
                f"positions: Kolmogorov-Smirnov {statistic:.3f} > {limit:.3f} over {INIT_DRAWS} builds, mean "
                f"{yours.mean().item():.4g}, std {yours.std().item():.4g}, where the reference's have mean "
                f"{mine.mean().item():.4g}, std {mine.std().item():.4g}; e.g. one a copy of, or tied to, the other)"
            )
    for first, second in transposed_pairs(reference[0], drawn):
        judged = pair_statistic(reference, draws, indices, first, second, transposed=True)
        if judged is not None and judged[0] > judged[1]:
            statistic, limit, mine, yours = judged
            return refused(
                f"{first} and {second} (its shape transposed) start related otherwise than the reference's (the "
                f"products of {first}[i, j] and {second}[j, i]: Kolmogorov-Smirnov {statistic:.3f} > {limit:.3f} "
                f"over {INIT_DRAWS} builds, mean {yours.mean().item():.4g}, where the reference's have mean "
                f"{mine.mean().item():.4g}; e.g. one layer's weight the other's transposed, scaled: the two layers' "
                "product starts positive definite)"
            )
    return None


def pair_statistic(
    reference: list[dict[str, torch.Tensor]],
    draws: list[dict[str, Any]],
    indices: dict[str, Any],
    first: str,
    second: str,
    transposed: bool,
) -> tuple[float, float, torch.Tensor, torch.Tensor] | None:
    """Two keys at the positions the candidate sampled in both (second's [j, i] beside first's [i, j] where
    `transposed`): the KS statistic and limit of the reference's pooled builds against the candidate's, of their
    differences (same shape) or products (transposed), and those two samples; None under PAIR_COMMON positions."""
    other = indices[second]
    if transposed:
        rows, cols = reference[0][first].shape
        other = (other % rows) * cols + other // rows  # second[r, c] sits where first has [c, r]
    common, at_first, at_second = common_positions(indices[first], other)
    if common.numel() < PAIR_COMMON:
        return None

    def related(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a.double() * b.double() if transposed else a.double() - b.double()

    mine = torch.cat(
        [
            related(
                state[first].detach().reshape(-1)[common].cpu(),
                (state[second].detach().t() if transposed else state[second].detach()).reshape(-1)[common].cpu(),
            )
            for state in reference
        ]
    )
    yours = torch.cat([related(d[first][at_first], d[second][at_second]) for d in draws])
    return ks_statistic(mine, yours), ks_limit(mine.numel(), yours.numel()), mine, yours


def transposed_pairs(state: dict[str, torch.Tensor], keys: list[str]) -> list[tuple[str, str]]:
    """Pairs of 2-d `keys` whose shapes are each other's transposed (an MLP's up and down projections, a square
    layer with another), per pair of shapes at most PAIR_LIMIT, nearest in key order first."""
    matrices = [k for k in keys if state[k].dim() == 2]
    found: dict[tuple[tuple[int, ...], tuple[int, ...]], list[tuple[str, str]]] = {}
    for gap in range(1, len(matrices)):
        for i in range(len(matrices) - gap):
            a, b = matrices[i], matrices[i + gap]
            if tuple(state[b].shape) == tuple(state[a].shape)[::-1]:
                group = found.setdefault((tuple(state[a].shape), tuple(state[b].shape)), [])
                if len(group) < PAIR_LIMIT:
                    group.append((a, b))
    return [pair for group in found.values() for pair in group]


def related_pairs(state: dict[str, torch.Tensor], keys: list[str]) -> list[tuple[str, str]]:
    """Pairs of `keys` of one shape, per shape at most PAIR_LIMIT of them, nearest in key order first (the branches
    of one block sit next to each other; a deep model has many keys of a shape, and O(k^2) pairs)."""
    by_shape: dict[tuple[int, ...], list[str]] = {}
    for key in keys:
        by_shape.setdefault(tuple(state[key].shape), []).append(key)
    found = []
    for group in by_shape.values():
        pairs = [(group[i], group[i + gap]) for gap in range(1, len(group)) for i in range(len(group) - gap)]
        found += pairs[:PAIR_LIMIT]
    return found


def common_positions(first: torch.Tensor, second: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The flat positions in both samples (each of distinct positions), and where each sample has them."""
    order = torch.argsort(second)
    ordered = second[order]
    at = torch.searchsorted(ordered, first).clamp(max=ordered.numel() - 1)
    hit = ordered[at] == first
    return first[hit], hit.nonzero().reshape(-1), order[at[hit]]


def blocks(candidate: dict[str, Any], key: str, first: torch.Tensor) -> Any:
    """The block of a large matrix the candidate's process reported (its rows, its columns, each build's values
    there), or what is wrong with it: rows and columns distinct, in range, as many as INIT_SAMPLE allows."""
    found, values = candidate.get("blocks"), candidate.get("block_values")
    pick = found.get(key) if isinstance(found, dict) else None
    if not (isinstance(pick, (tuple, list)) and len(pick) == 2 and isinstance(values, list)):
        return "no block of the matrix reported"
    side = math.isqrt(INIT_SAMPLE)
    for axis, (at, size) in enumerate(zip(pick, (first.shape[0], first.numel() // first.shape[0]), strict=True)):
        if not (isinstance(at, torch.Tensor) and at.dtype == torch.int64 and at.dim() == 1):
            return "the block's rows and columns are not positions"
        inside = at.numel() > 0 and int(at.min()) >= 0 and int(at.max()) < size
        if at.numel() != min(side, size) or at.unique().numel() != at.numel() or not inside:
            return f"the block's {'rows' if axis == 0 else 'columns'} are not a sample of the matrix's"
    shape = (pick[0].numel(), pick[1].numel())
    builds = [v.get(key) if isinstance(v, dict) else None for v in values]
    if len(builds) != INIT_DRAWS or not all(
        isinstance(b, torch.Tensor) and tuple(b.shape) == shape and b.dtype == first.dtype for b in builds
    ):
        return "the block's values are missing"
    return (pick[0], pick[1]), builds


def unwritten_keys(candidate: Any) -> set[str]:
    """The keys a report (worker.initial_states, untrusted) shows as nobody wrote them in every build: all NaN
    (floating), all -1 (integer), all True (bool), as worker.reset_build leaves memory before reset_parameters()."""
    draws = candidate.get("draws") if isinstance(candidate, dict) else None
    if not isinstance(draws, list) or not draws or not all(isinstance(d, dict) for d in draws):
        return set()

    return {
        k
        for k in draws[0]
        if all(isinstance(t, torch.Tensor) and t.numel() and unwritten(t) for t in (d.get(k) for d in draws))
    }


def unwritten(t: torch.Tensor) -> bool:
    """Whether `t` holds only what worker.reset_build fills before reset_parameters(): NaN (floating, complex),
    True (bool), -1 (other integers)."""
    if t.is_floating_point() or t.is_complex():
        return bool(t.isnan().all())
    return bool(t.all()) if t.dtype == torch.bool else bool((t == -1).all())


def spectra(builds: list[torch.Tensor], shape: tuple[int, int]) -> torch.Tensor:
    """Each build's singular values as a matrix of `shape` (rows: the first dimension), over their norm, pooled: a
    low-rank start (symmetry hardly broken) has the right entries and few non-zero values here."""
    found = []
    for b in builds:
        values = torch.linalg.svdvals(b.double().reshape(shape))
        found.append(values / values.norm().clamp(min=torch.finfo(torch.float64).tiny))
    return torch.cat(found)


def across(builds: list[torch.Tensor]) -> torch.Tensor:
    """The second build's values minus the first's at the same positions, the fourth's minus the third's, and so
    on, pooled: pairs that share no build (differences from one common build are correlated through it)."""
    return torch.cat([builds[k + 1].double() - builds[k].double() for k in range(0, len(builds) - 1, 2)])


def neighbours(candidate: dict[str, Any], key: str, idx: torch.Tensor, dims: int) -> list[list[torch.Tensor]] | None:
    """Per build, per dimension, the values the candidate's process reported next to the sampled positions."""
    reported = candidate.get("neighbors")
    if not isinstance(reported, list) or len(reported) != INIT_DRAWS:
        return None
    found = []
    for build in reported:
        values = build.get(key) if isinstance(build, dict) else None
        if not isinstance(values, list) or len(values) != dims:
            return None
        if not all(isinstance(v, torch.Tensor) and v.shape == idx.shape for v in values):
            return None
        found.append(values)
    return found
