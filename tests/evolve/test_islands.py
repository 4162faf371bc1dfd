"""Expert roles, scoring, and one island's selection and archive."""

from __future__ import annotations

import random

import pytest
from evolve_doubles import gene_source
from foundry.core.records import Candidate, Diagnosis, FailureKind, KernelFacts, Stage, Timing, Verdict
from foundry.evolve import Island, Member, assign_experts, load_experts, score, static_cost
from foundry.evolve.experts import load_expert
from foundry.evolve.scoring import fitness
from foundry.rules.loader import RulesError


def verdict(cid: str, ok: bool = True, speedup: float | None = None, stage: Stage = Stage.CORRECTNESS, **kw) -> Verdict:
    timing = Timing(measured=True, candidate_ms=1.0 / speedup, eager_ms=1.0) if speedup else None
    diagnoses = () if ok else (Diagnosis(stage=stage, kind=FailureKind.MISMATCH, message="off"),)
    return Verdict(candidate_id=cid, verified=ok, policy="strict", device="t", timing=timing, diagnoses=diagnoses, **kw)


def member(cid: str, order: int, **kw) -> Member:
    cand = Candidate(id=cid, source=gene_source({"x": order}))
    return Member.of(cand, verdict(cid, **kw), order)


def test_shipped_experts_load_in_island_order():
    roles = load_experts()
    names = [r.name for r in roles]
    assert names[:4] == ["fusion", "memory_access", "tiling_launch", "compute_restructuring"]
    assert all(r.prompt and r.focus and r.preferred_genes and r.transformations for r in roles)
    assert [r.name for r in assign_experts(roles, 6)] == names[:4] + names[:2]


def test_unknown_keys_and_misnamed_files_are_errors(tmp_path):
    good = "name: fusion\ntitle: T\nfocus: f\nprompt: p\n"
    (tmp_path / "fusion.yaml").write_text(good + "temperatur: 0.3\n")
    with pytest.raises(RulesError, match="temperatur"):
        load_expert(tmp_path / "fusion.yaml")
    (tmp_path / "other.yaml").write_text(good)
    with pytest.raises(RulesError, match="must be fusion.yaml"):
        load_expert(tmp_path / "other.yaml")
    (tmp_path / "fusion.yaml").write_text(good + "model: my-model\n")
    assert load_expert(tmp_path / "fusion.yaml").model == "my-model"
    with pytest.raises(RulesError, match="no expert roles"):
        load_experts(tmp_path / "empty")


def test_measured_speedup_is_the_score():
    cand = Candidate(id="a", source="")
    s = score(cand, verdict("a", speedup=2.5))
    assert s is not None and s.measured and s.value == pytest.approx(2.5)
    assert score(cand, verdict("a", ok=False)) is None


def test_static_cost_model_prefers_fusion_and_punishes_spills():
    cand = Candidate(id="a", source="", genes={"BLOCK_SIZE": 1024})
    one = verdict("a", triton_launches=4, trials=4)
    two = verdict("a", triton_launches=8, trials=4)
    spilled = verdict("a", triton_launches=4, trials=4, kernels=(KernelFacts(name="k", registers=255, spills=40),))
    assert static_cost(cand, one) < static_cost(cand, two)
    assert static_cost(cand, one) < static_cost(cand, spilled)
    small = Candidate(id="b", source="", genes={"BLOCK_SIZE": 16})
    assert static_cost(cand, one) < static_cost(small, one)
    # namespaced genes: a row kernel's tile is BLOCK_M x BLOCK_N, its threads num_warps x 32
    row = Candidate(id="r", source="", genes={"row.BLOCK_M": 1, "row.BLOCK_N": 2048, "row.num_warps": 8})
    starved = Candidate(id="s", source="", genes={"row.BLOCK_M": 1, "row.BLOCK_N": 256, "row.num_warps": 32})
    crowded = Candidate(id="c", source="", genes={"row.BLOCK_M": 16, "row.BLOCK_N": 8192, "row.num_warps": 1})
    assert static_cost(row, one) == static_cost(cand, one)  # a sensible shape costs nothing extra
    assert static_cost(row, one) < static_cost(starved, one)
    assert static_cost(row, one) < static_cost(crowded, one)
    deep = Candidate(
        id="m",
        source="",
        genes={"matmul.BLOCK_M": 128, "matmul.BLOCK_N": 128, "matmul.BLOCK_K": 16, "matmul.num_warps": 8},
    )
    assert static_cost(deep, one) == static_cost(cand, one)  # BLOCK_K is a depth, not part of the tile
    est = score(cand, one)
    assert est is not None and not est.measured
    # on a GPU, a verified candidate without timing ranks below every measured one
    assert score(cand, one, expect_timing=True).value < score(cand, verdict("a", speedup=0.2)).value


def test_failures_rank_by_how_far_they_got():
    cand = Candidate(id="a", source="")
    compile_fail = fitness(cand, verdict("a", ok=False, stage=Stage.COMPILE))
    mismatch = fitness(cand, verdict("a", ok=False, stage=Stage.CORRECTNESS))
    ok = fitness(cand, verdict("a", speedup=0.1))
    assert compile_fail < mismatch < 0 < ok


def test_archive_keeps_the_best_verified_and_population_is_capped():
    role = load_experts()[0]
    island = Island(0, role, population_size=4, elite_size=2)
    improved = [island.add(member(f"c{i}", i, speedup=float(s)), generation=i) for i, s in enumerate([1, 3, 2, 5, 4])]
    assert improved == [True, True, False, True, False]
    assert [m.candidate.id for m in island.elites] == ["c3", "c4"]
    assert len(island.population) == 4 and "c0" not in {m.candidate.id for m in island.population}
    island.add(member("bad", 9, ok=False), generation=5)
    assert island.failures == {"mismatch": 1}
    assert island.last_improvement == 3
    assert island.stagnant(6, patience=3) and not island.stagnant(5, patience=3)


def test_tournament_selection_is_seeded_and_favours_the_fit():
    role = load_experts()[0]
    island = Island(0, role, population_size=8, tournament_size=3)
    for i in range(8):
        island.add(member(f"c{i}", i, speedup=1.0 + i), generation=0)
    picks = [island.select_parent(random.Random(42)).candidate.id for _ in range(3)]
    assert len(set(picks)) == 1  # same seed, same pick
    rng = random.Random(0)
    counts: dict[str, int] = {}
    for _ in range(400):
        cid = island.select_parent(rng).candidate.id
        counts[cid] = counts.get(cid, 0) + 1
    assert counts.get("c7", 0) > counts.get("c0", 0)
    assert "c0" not in counts or counts["c0"] < 20  # the weakest can only win a tournament of itself
