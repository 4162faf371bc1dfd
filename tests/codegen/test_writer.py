"""The template writer's search moves: determinism, warm starts, diagnosis-driven refinement,
crossover, and a clear 'unsupported' for ops it has no template for."""

from __future__ import annotations

import pytest
from codegen_helpers import EXAMPLES, OPERATORS, evaluate, explain, header_genes, module_doc, request_for
from foundry.codegen import genes as G
from foundry.core.protocols import Hint
from foundry.core.records import (
    Candidate,
    Diagnosis,
    FailureKind,
    KernelFacts,
    Roofline,
    Stage,
    Timing,
    Verdict,
)
from foundry.evaluate.static_guard import StaticGuard
from foundry.evolve.loop import derive_seed
from foundry.rules.loader import load_rules
from foundry.writers.template import TemplateWriter, UnsupportedOperator, load_refinement


def verdict(
    verified: bool = False,
    kind: FailureKind | None = None,
    bound: str | None = None,
    pct: float = 50.0,
    spills: int | None = None,
) -> Verdict:
    diagnoses = (Diagnosis(stage=Stage.CORRECTNESS, kind=kind, message="x"),) if kind else ()
    timing = None
    if bound:
        roof = Roofline(
            bytes_moved=1, flops=1, floor_ms=1.0, pct_of_floor=pct, bound=bound, bandwidth_gbs=4000, peak_tflops=60
        )
        timing = Timing(measured=True, candidate_ms=1.0, eager_ms=1.0, roofline=roof)
    kernels = (KernelFacts(name="k", spills=spills),) if spills is not None else ()
    return Verdict(
        candidate_id="p",
        verified=verified,
        policy="strict",
        device="cuda",
        diagnoses=diagnoses,
        timing=timing,
        kernels=kernels,
    )


def test_refinement_table_loads_and_names_only_known_genes():
    table = load_refinement()
    assert table.rules
    assert {a.gene for r in table.rules for a in r.actions} <= set(G.SPACE)


def test_proposals_are_deterministic_for_a_seed_and_differ_across_seeds(writer: TemplateWriter):
    path = EXAMPLES / "softmax.py"
    first = writer.propose(request_for(path, count=4, seed=3))
    again = writer.propose(request_for(path, count=4, seed=3))
    other = writer.propose(request_for(path, count=4, seed=4))
    assert [c.id for c in first] == [c.id for c in again]
    assert [c.source for c in first] == [c.source for c in again]
    assert len(first) == 4 and len({c.id for c in first}) == 4
    assert [c.genes for c in first[1:]] != [c.genes for c in other[1:]]
    assert first[0].notes == "defaults"


def test_every_candidate_passes_the_static_guard_and_names_its_genes(writer: TemplateWriter):
    guard = StaticGuard(load_rules().guard)
    for path in sorted(EXAMPLES.glob("*.py")):
        for c in writer.propose(request_for(path, count=2, expert="tiling_launch")):
            errors, _ = guard.check(c.source)
            assert not errors, (path.name, [e.headline() for e in errors])
            assert c.source.startswith('"""')
            assert f"a Kernel Foundry kernel for examples/ops/{path.name}::" in module_doc(c.source)
            assert header_genes(c.source) and c.genes
            assert all(name in G.SPACE for name in c.genes)


def test_hint_genes_are_warm_starts(writer: TemplateWriter):
    hint = Hint(id="h1", suggestion="wider rows", genes={"row.BLOCK_M": 4, "row.num_warps": 16, "nope": 1})
    cands = writer.propose(request_for(EXAMPLES / "layernorm.py", count=3, hints=(hint,)))
    warm = [c for c in cands if "hint h1" in c.notes]
    assert warm and warm[0].genes["row.BLOCK_M"] == 4 and warm[0].genes["row.num_warps"] == 16
    assert "nope" not in warm[0].genes


def test_mutations_change_genes_that_shape_the_kernel(writer: TemplateWriter):
    """A gene the kernel never reads (row.welford without a variance, row.combine or row.occupancy with rows
    unsplit) changes nothing in its source: mutating it gives the origin's kernel again, which another island
    may already hold. The README demo (softmax, 4 islands, 1 child each, the seed hints) starved its fourth
    island so: its only own candidate was the third island's kernel with row.combine changed."""
    spec = request_for(EXAMPLES / "softmax.py").spec
    names = writer.space(writer.analysis(spec))
    shaping = writer.shaping_genes(spec, G.defaults({"row"}), names, {})
    assert {"row.welford", "row.combine", "row.occupancy"} & set(shaping) == set()
    assert {"row.num_warps", "row.BLOCK_N", "row.max_single_n"} <= set(shaping)
    split = writer.shaping_genes(spec, {**G.defaults({"row"}), "row.split": 4, "row.max_single_n": 0}, names, {})
    assert "row.combine" in split  # split rows read it
    hints = (
        Hint(id="online-softmax", suggestion="", genes={"row.online_reduction": True, "plan.merge_reductions": True}),
        Hint(
            id="row-per-program",
            suggestion="",
            genes={"row.BLOCK_M": 1, "row.max_single_n": 16384, "row.num_warps": 16},
        ),
        Hint(id="exp2-folded-constant", suggestion="", genes={}),
    )
    experts = ["fusion", "memory_access", "tiling_launch", "compute_restructuring"]
    seen: set[str] = set()
    for island, expert in enumerate(experts):  # generation 0 as the search asks for it (SPARES x 1 child)
        seed = derive_seed(0, "propose", island, 0)  # the search's seed 0, as `foundry optimize` runs it
        request = request_for(EXAMPLES / "softmax.py", expert=expert, island=island, count=3, seed=seed, hints=hints)
        fresh = [c.source for c in writer.propose(request) if c.source not in seen]
        assert fresh, f"island {island} ({expert}) has only kernels other islands hold"
        seen.add(fresh[0])


def test_a_gene_set_the_templates_cannot_express_is_skipped_not_fatal(writer: TemplateWriter, monkeypatch):
    # a gene set whose render is unsupported (here: any with fusion off) renders nothing, the others still do;
    # a raise would retire the writer for the whole search
    path = EXAMPLES / "conv_2d_bias_relu.py"
    request = request_for(path, count=2)
    render = writer.render

    def refusing(spec, genes):
        if genes.get("plan.fuse_epilogue") is False:
            raise UnsupportedOperator(spec, "plan", "fusion off is not expressible here")
        return render(spec, genes)

    monkeypatch.setattr(writer, "render", refusing)
    base = G.defaults(writer.kinds(writer.analysis(request.spec)))
    cands = writer.candidates(request, [({**base, "plan.fuse_epilogue": False}, "unfused"), (base, "defaults")])
    assert [c.notes for c in cands] == ["defaults"]
    for seed in range(6):  # mutations that turn fusion off no longer end a proposal
        assert writer.propose(request_for(path, count=8, seed=seed, expert="fusion"))
    # when no gene set renders, the operator is unsupported as before
    with pytest.raises(UnsupportedOperator, match="fusion off"):
        writer.candidates(request, [({**base, "plan.fuse_epilogue": False}, "unfused")])


def test_matmul_generation_zero_tries_tensor_core_fp32(writer: TemplateWriter):
    cands = writer.propose(request_for(EXAMPLES / "linear_bias_relu.py", count=3))
    precisions = [c.genes["matmul.precision"] for c in cands]
    assert precisions[0] == "ieee" and "tf32x3" in precisions
    assert "tf32" not in precisions  # fp32 operators never get single-pass TF32


def test_generation_zero_measures_the_plane_kernel_only_for_narrow_groups(writer: TemplateWriter):
    # depthwise (one channel per group): "auto" picks the plane kernel at run time; the plane kernel alone, with
    # the 16 x 128 tile over 4 warps, comes second
    [defaults, plane] = writer.propose(request_for(EXAMPLES / "conv_depthwise_2d_hardswish.py", count=2))
    assert defaults.genes["conv.algo"] == "auto" and "elif CIG == 1:" in defaults.source
    assert plane.genes["conv.algo"] == "plane"
    assert (plane.genes["conv.BLOCK_N"], plane.genes["conv.num_warps"]) == (16, 4)
    assert "tl.static_range(K0)" in plane.source and "_gemm_fwd_kernel" not in plane.source
    # the depthwise convolution gets no GEMM tile fitted to its channels
    depthwise = writer.propose(request_for(EXAMPLES / "conv_depthwise_2d_hardswish.py", count=3))
    assert not any("fitted" in c.notes for c in depthwise)
    # a dense convolution (64 channels per group) runs as a GEMM: no plane candidate in generation 0, but
    # the fitted tile (channels-last, tap-major), the fitted tile on the input as given, the defaults (one flat
    # channel x tap K loop), 3xTF32, then the tap-major K loop
    wide = writer.propose(request_for(EXAMPLES / "conv_2d_bias_relu.py", count=5))
    assert all(c.genes["conv.algo"] != "plane" for c in wide if "mutation" not in c.notes)
    assert [(c.genes["conv.precision"], c.genes["conv.k_order"], c.genes["conv.layout"]) for c in wide[:5]] == [
        ("tf32x3", "tap", "channels_last"),
        ("tf32x3", "channel", "nchw"),
        ("ieee", "channel", "nchw"),
        ("tf32x3", "channel", "nchw"),
        ("ieee", "tap", "nchw"),
    ]


@pytest.mark.parametrize(
    ("example", "tile", "as_given"),
    [
        ("conv_2d_bias_relu.py", (128, 128, 8), "channel"),  # 128 output channels: one tile spans them
        ("conv_grouped_strided_silu.py", (128, 64, 8), "channel"),  # 64 channels per group
        ("conv_3d_scale_clamp.py", (128, 32, 4), "channel"),  # 32 channels: 4 warps
        ("conv_transpose3d_sigmoid.py", (128, 32, 4), "tap"),  # strided transposed: stride phases skip taps
    ],
)
def test_generation_zero_starts_from_a_gemm_tile_fitted_to_the_output_channels(writer, example, tile, as_given):
    fitted, given = writer.propose(request_for(EXAMPLES / example, count=2))
    assert "fitted to the output channels, channels-last input" in fitted.notes
    g = fitted.genes
    assert (g["conv.BLOCK_M"], g["conv.BLOCK_N"], g["conv.num_warps"]) == tile
    assert (g["conv.precision"], g["conv.num_stages"], g["conv.layout"], g["conv.k_order"]) == (
        "tf32x3",
        3,
        "channels_last",
        "tap",
    )
    assert f"BLOCK_N={tile[1]}" in fitted.source and "xcl = " in fitted.source
    # second: the same tile on the input as given
    assert "fitted to the output channels, input as given" in given.notes
    assert {k: v for k, v in given.genes.items() if k not in ("conv.layout", "conv.k_order")} == {
        k: v for k, v in g.items() if k not in ("conv.layout", "conv.k_order")
    }
    assert (given.genes["conv.layout"], given.genes["conv.k_order"]) == ("nchw", as_given)
    assert "xcl = " not in given.source


def test_generation_zero_splits_k_only_where_output_tiles_are_too_few_to_fill_the_gpu(writer: TemplateWriter):
    # 8 x 7 x 7 positions by 512 channels: 4 x 4 tiles of 128 x 128, K = 512 x 9 (16 channel blocks per tap)
    split, fitted = writer.propose(request_for(EXAMPLES / "conv_2d_deep_small_image.py", count=2))
    assert "K split 8 ways" in split.notes and split.genes["conv.split_k"] == 8
    assert {**split.genes, "conv.split_k": 1} == fitted.genes
    assert "SPLIT_K=8" in split.source and fitted.genes["conv.split_k"] == 1
    # 16 x 128 x 128 positions: thousands of tiles, no split in generation 0
    wide = writer.propose(request_for(EXAMPLES / "conv_2d_bias_relu.py", count=4))
    assert all(c.genes["conv.split_k"] == 1 for c in wide if "mutation" not in c.notes)


def test_hybrid_generation_zero_measures_library_fitted_and_as_given_before_the_defaults():
    """Even islands start from the library convolution, odd ones from the fitted all-Triton tile; the tile on the
    input as given follows either, and the defaults come after both (islands skip what another one has, so
    the first three islands measure the three)."""
    hybrid = TemplateWriter(policy="hybrid")
    path = EXAMPLES / "conv_1d_dilated_gelu.py"
    notes = {
        island: [c.notes.split(";")[0] for c in hybrid.propose(request_for(path, island=island, count=4))]
        for island in (0, 1)
    }
    fitted, given = (
        "implicit GEMM tile fitted to the output channels, channels-last input",
        "implicit GEMM tile fitted to the output channels, input as given",
    )
    assert notes[0] == ["library convolution", fitted, given, "defaults"]
    assert notes[1] == [fitted, "library convolution", given, "defaults"]


def test_generation_zero_keeps_rows_in_registers_past_the_default_tile(writer: TemplateWriter):
    # log-softmax over 32,000 columns: past the default single-tile limit, a looped kernel reads each row twice
    [defaults, whole] = writer.propose(request_for(EXAMPLES / "log_softmax.py", count=2))
    assert defaults.notes == "defaults" and "whole rows in registers" in whole.notes
    assert whole.genes["row.max_single_n"] == 32768 and whole.genes["row.num_warps"] == 32
    assert "BLOCK_N=next_power_of_2(N)" in whole.source and "_loop_fwd_kernel" not in whole.source  # all rows fit
    # cross-entropy over the same width reads its rows once in the loop, but reduces every tile twice (online
    # max and sum): whole rows are proposed too, at the gene's top value only (the defaults keep the loop)
    [defaults, whole] = writer.propose(request_for(EXAMPLES / "cross_entropy.py", count=2))
    assert "whole rows in registers" in whole.notes and "BLOCK_N=next_power_of_2(N)" in whole.source
    assert "BLOCK_N=next_power_of_2(N)" not in defaults.source
    # layer norm's 4,096 columns already fit the default single tile
    assert not any("whole rows" in c.notes for c in writer.propose(request_for(EXAMPLES / "layernorm.py", count=3)))


@pytest.mark.interp
@pytest.mark.slow
@pytest.mark.parametrize("example", ["cross_entropy.py", "argmax_rows.py"])
def test_whole_rows_of_one_pass_reductions_are_verified(writer: TemplateWriter, example: str):
    [_, whole] = writer.propose(request_for(EXAMPLES / example, count=2))
    assert "whole rows in registers" in whole.notes
    verdict = evaluate(EXAMPLES / example, whole.source, f"whole-{example}")
    assert verdict.verified, explain(verdict)


def parent_of(writer: TemplateWriter, path, **genes) -> Candidate:
    [base] = writer.propose(request_for(path))
    return base.model_copy(update={"id": "parent", "genes": {**base.genes, **genes}})


@pytest.mark.parametrize(
    ("path", "genes", "diagnosis", "expect"),
    [
        (
            "linear_bias_relu.py",
            {"matmul.precision": "tf32x3"},
            verdict(kind=FailureKind.MISMATCH),
            {"matmul.precision": "ieee"},
        ),
        (
            "linear_bias_relu.py",
            {"matmul.num_stages": 4},
            verdict(kind=FailureKind.RESOURCE_LIMIT),
            {"matmul.num_stages": 3},
        ),
        ("softmax.py", {"row.max_single_n": 16384}, verdict(verified=True, spills=12), {"row.max_single_n": 8192}),
        (
            "swish_residual.py",
            {"pointwise.BLOCK_SIZE": 1024},
            verdict(verified=True, bound="memory", pct=55.0),
            {"pointwise.BLOCK_SIZE": 2048},
        ),
        (
            "batched_matmul.py",
            {"matmul.precision": "ieee"},
            verdict(verified=True, bound="compute", pct=40.0),
            {"matmul.precision": "tf32x3"},
        ),
        (
            "layernorm.py",
            {"row.online_reduction": True},
            verdict(kind=FailureKind.MISMATCH),
            {"row.online_reduction": False},
        ),
        (  # split rows at 44% of copy bandwidth (two kernels, the row read twice): the merge moves into one launch
            "groupnorm.py",
            {"row.split": "auto", "row.combine": "two_kernels", "row.BLOCK_N": 1024, "row.num_warps": 4},
            verdict(verified=True, bound="memory", pct=44.0),
            {"row.split": "auto", "row.combine": "one_kernel"},
        ),
        (  # spills under a register cap (triton 3.7.1 spills 56 bytes at 96 registers here): the cap loosens,
            # one step, and the tile stays as it is (uncapped it did not spill)
            "groupnorm.py",
            {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.occupancy": 5},
            verdict(verified=True, spills=56),
            {"row.occupancy": 4, "row.BLOCK_N": 8192, "row.split": "auto"},
        ),
        (  # a memory-bound row kernel under 80%: more programs per SM under a cap
            "groupnorm.py",
            {"row.split": "auto", "row.combine": "one_kernel", "row.occupancy": 0},
            verdict(verified=True, bound="memory", pct=77.0),
            {"row.occupancy": 2},
        ),
        (  # a latency-bound conv: more programs, by smaller tiles and a wider K split
            "conv_2d_deep_small_image.py",
            {"conv.split_k": 2},
            verdict(verified=True, bound="latency", pct=10.0),
            {"conv.split_k": 4, "conv.BLOCK_M": 64},
        ),
    ],
)
def test_diagnosis_drives_the_childs_genes(writer: TemplateWriter, path, genes, diagnosis, expect):
    parent = parent_of(writer, EXAMPLES / path, **genes)
    [child] = writer.propose(request_for(EXAMPLES / path, parent=parent, parent_verdict=diagnosis, generation=1))
    assert child.parent_id == "parent"
    assert child.notes.startswith("refined by")
    for name, value in expect.items():
        assert child.genes[name] == value, (name, child.genes)


def test_memory_bound_at_roofline_is_not_refined(writer: TemplateWriter):
    parent = parent_of(writer, EXAMPLES / "swish_residual.py")
    cands = writer.propose(
        request_for(
            EXAMPLES / "swish_residual.py",
            parent=parent,
            count=2,
            parent_verdict=verdict(verified=True, bound="memory", pct=92.0),
        )
    )
    assert not any(c.notes.startswith("refined") for c in cands)
    assert all(c.notes.startswith("mutation") for c in cands)


def test_verified_parent_is_crossed_with_past_template_kernels(writer: TemplateWriter):
    path = EXAMPLES / "softmax.py"
    parent = parent_of(writer, path, **{"row.BLOCK_M": 1})
    past = parent.model_copy(
        update={"id": "other", "writer": "template", "genes": {**parent.genes, "row.BLOCK_M": 2, "row.num_warps": 2}}
    )
    cands = writer.propose(
        request_for(
            path,
            parent=parent,
            parent_verdict=verdict(verified=True, bound="memory", pct=95.0),
            past_kernels=(past,),
            count=2,
            seed=11,
        )
    )
    cross = [c for c in cands if c.notes.startswith("crossover")]
    assert cross
    for name, value in cross[0].genes.items():
        assert value in (parent.genes[name], past.genes[name])


def test_unsupported_op_is_named_with_a_reason(writer: TemplateWriter):
    req = request_for(OPERATORS / "conv_relu.py")
    with pytest.raises(UnsupportedOperator) as info:
        writer.propose(req)
    assert "convolution" in info.value.op
    assert info.value.diagnosis.kind == FailureKind.UNSUPPORTED
    assert info.value.diagnosis.stage == Stage.WRITER
    assert writer.check(req.spec) is not None
    assert writer.check(request_for(EXAMPLES / "softmax.py").spec) is None


def test_repair_keeps_tiles_inside_shared_memory_and_register_budgets():
    g = G.repair(
        {
            "matmul.BLOCK_M": 256,
            "matmul.BLOCK_N": 256,
            "matmul.BLOCK_K": 128,
            "matmul.num_stages": 5,
            "matmul.num_warps": 2,
            "matmul.GROUP_M": 8,
            "matmul.precision": "ieee",
            "row.BLOCK_M": 16,
            "row.BLOCK_N": 8192,
            "row.max_single_n": 32768,
        }
    )
    smem = (g["matmul.BLOCK_M"] + g["matmul.BLOCK_N"]) * g["matmul.BLOCK_K"] * 4 * g["matmul.num_stages"]
    assert smem <= G.SHARED_MEMORY_BYTES
    assert g["matmul.num_warps"] == 8
    assert g["row.BLOCK_M"] * g["row.max_single_n"] <= G.MAX_TILE_ELEMENTS


@pytest.mark.parametrize(
    ("warps", "block_n", "single", "want_block_n", "want_single"),
    [
        (8, 2048, 16384, 2048, 16384),  # the defaults: 8 values per thread looped, 64 in one pass
        (1, 8192, 16384, 1024, 4096),  # 256 per thread spilled 7.8 KB and compiled for 13 s (sm_90)
        (2, 4096, 32768, 2048, 8192),
        (32, 8192, 32768, 8192, 32768),  # enough threads: unchanged
    ],
)
def test_repair_bounds_the_values_each_thread_of_a_row_kernel_holds(warps, block_n, single, want_block_n, want_single):
    g = G.repair({"row.BLOCK_M": 1, "row.BLOCK_N": block_n, "row.max_single_n": single, "row.num_warps": warps})
    assert (g["row.BLOCK_N"], g["row.max_single_n"]) == (want_block_n, want_single)
    assert g["row.num_warps"] == warps
