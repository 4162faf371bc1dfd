"""Split-row reductions (gene row.split): a row cut into chunks, partial statistics per chunk (Welford
count/mean/M2, online max/sum-exp, plain sums), then a kernel that merges a row's partials and writes its
chunk. Verified by the real evaluator under the Triton interpreter on odd sizes (rows that are not a
multiple of the chunk, split counts that do not divide the row, chunks of several tiles, a shorter last
chunk), and checked for when the writer proposes it and when the codegen falls back to one program per row."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import triton
from codegen_helpers import EXAMPLES, code, evaluate, explain, identifiers, request_for
from foundry.codegen import genes as G
from foundry.codegen.rowsplit import FEW_ROWS, MAX_SPLITS, MIN_SPLIT_N
from foundry.writers.template import TemplateWriter

HEADER = "import torch\nfrom torch import nn\nfrom torch.nn import functional as F\n\nFOUNDRY_PRECISION = 'fp32'\n"

# group norm over images, inputs far from zero mean (a one-pass sum/sum-of-squares variance would lose
# digits here; Welford partials merged with Chan's formula do not): small rows of 3 channels x 35 = 105
# elements, a variant of 3 x 25 = 75, and full (GPU) sizes with 128 rows of 262,144 elements
GROUPNORM_MODEL = """
class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(16, 128, 128, 128)]


def get_init_inputs():
    return [8, 128]
"""

GROUPNORM = (
    GROUPNORM_MODEL
    + """

def get_cpu_inputs():
    return [torch.randn(2, 6, 7, 5) * 3.0 + 50.0]


def get_cpu_init_inputs():
    return [2, 6]


def get_cpu_shape_variants():
    return [[torch.randn(3, 6, 5, 5) * 3.0 + 50.0]]
"""
)

# layer norm over a very long hidden dim with a fused epilogue (GELU, residual): 3 rows of 200
LAYERNORM_EPILOGUE = """
class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return F.gelu(self.norm(x)) + x


def get_inputs():
    return [torch.randn(4, 1048576)]


def get_init_inputs():
    return [1048576]


def get_cpu_inputs():
    return [torch.randn(3, 200) + 4.0]


def get_cpu_init_inputs():
    return [200]


def get_cpu_shape_variants():
    return [[torch.randn(2, 200) + 4.0]]
"""

# per-row statistics as outputs next to the normalized rows: only chunk 0 of each row stores them
ROW_STATS = """
class Model(nn.Module):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + 1e-5), mean.squeeze(-1)


def get_inputs():
    return [torch.randn(8, 65536)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(4, 90)]


def get_cpu_init_inputs():
    return []


def get_cpu_shape_variants():
    return [[torch.randn(3, 77)]]
"""

# a per-row input (a temperature per row) read by both kernels: online (max, sum of exp) partials
ROW_TEMPERATURE = """
class Model(nn.Module):
    def forward(self, x, t):
        return torch.softmax(x * t, dim=-1) + t


def get_inputs():
    return [torch.randn(16, 100000), torch.rand(16, 1) + 0.5]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 70), torch.rand(3, 1) + 0.5]


def get_cpu_init_inputs():
    return []


def get_cpu_shape_variants():
    return [[torch.randn(2, 70), torch.rand(2, 1) + 0.5]]
"""

# rows long enough for the "auto" sizing at real genes (2048-wide tiles): 4 rows of 4 channels x 16,384,
# far from zero mean, 16 chunks of 4,096 per row
LONG_GROUPNORM = (
    GROUPNORM_MODEL
    + """

def get_cpu_inputs():
    return [torch.randn(2, 8, 128, 128) * 2.0 + 30.0]


def get_cpu_init_inputs():
    return [2, 8]


def get_cpu_shape_variants():
    return [[torch.randn(1, 8, 128, 128) * 2.0 + 30.0]]
"""
)


# channels of 16 and 32 elements (HW a multiple of 16-wide tiles: one weight per tile, CH_TILE) and a
# variant of 15-element channels (tiles cross channels: the per-element gather)
CHANNEL_TILES = (
    GROUPNORM_MODEL
    + """

def get_cpu_inputs():
    return [torch.randn(2, 6, 4, 4) * 3.0 + 50.0]


def get_cpu_init_inputs():
    return [2, 6]


def get_cpu_shape_variants():
    return [[torch.randn(3, 6, 4, 8) * 3.0 + 50.0], [torch.randn(2, 6, 3, 5) * 3.0 + 50.0]]
"""
)


def operator_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "op.py"
    path.write_text(HEADER + textwrap.dedent(body))
    return path


def split_launch(source: str) -> bool:
    return "_split_partial_kernel[(M, splits)]" in source and "_split_fwd_kernel[" in source


def one_launch(source: str) -> bool:
    return "_split_one_kernel[(M * tiles,)]" in source


CASES = [
    # 105 = 48 + 48 + 9: chunks of three 16-wide tiles, a short last chunk
    ("groupnorm-3-chunks-of-3-tiles", GROUPNORM, {"row.split": 3, "row.BLOCK_N": 16, "row.welford": "tile"}),
    # 8 asked, 105 / 8 rounds up to 16-element chunks: 7 chunks, the last one 9 elements
    ("groupnorm-8-uneven", GROUPNORM, {"row.split": 8, "row.BLOCK_N": 16}),
    # chunks of two 32-wide tiles, the last 41 elements; several rows per group of 4 warps
    ("groupnorm-2-chunks", GROUPNORM, {"row.split": 2, "row.BLOCK_N": 32, "row.num_warps": 4}),
    # 200 = 64 + 64 + 64 + 8, with the GELU and residual epilogue in the merge kernel
    ("layernorm-epilogue-4", LAYERNORM_EPILOGUE, {"row.split": 4, "row.BLOCK_N": 16}),
    ("row-stats-outputs-5", ROW_STATS, {"row.split": 5, "row.BLOCK_N": 16}),
    ("softmax-row-temperature-4", ROW_TEMPERATURE, {"row.split": 4, "row.BLOCK_N": 16}),
    ("groupnorm-auto-real-tiles", LONG_GROUPNORM, {"row.split": "auto"}),
    # 48 = 32 + 16: chunk starts and channels on 16-wide tile boundaries (one weight per tile)
    ("groupnorm-channel-tiles-2", CHANNEL_TILES, {"row.split": 2, "row.BLOCK_N": 16}),
]


@pytest.mark.interp
@pytest.mark.slow
@pytest.mark.parametrize(("name", "body", "genes"), CASES, ids=[c[0] for c in CASES])
def test_split_rows_are_verified(writer: TemplateWriter, tmp_path: Path, name: str, body: str, genes: dict):
    path = operator_file(tmp_path, body)
    source = writer.render(request_for(path).spec, genes)
    assert split_launch(source), source
    verdict = evaluate(path, source, name)
    assert verdict.verified, explain(verdict)


# rows of 600 (and 540) elements: 256-wide tiles over 1 warp, so the one-launch fallback reads each tile in
# 64-element chunks (4 full, or 1 full and a short last one, or one short one) and merges their statistics
CHUNKED_GROUPNORM = (
    GROUPNORM_MODEL
    + """

def get_cpu_inputs():
    return [torch.randn(2, 6, 10, 20) * 3.0 + 50.0]


def get_cpu_init_inputs():
    return [2, 6]


def get_cpu_shape_variants():
    return [[torch.randn(3, 6, 9, 20) * 3.0 + 50.0]]
"""
)

CHUNKED_TEMPERATURE = ROW_TEMPERATURE.replace(
    "torch.randn(3, 70), torch.rand(3, 1)", "torch.randn(3, 600) * 4.0, torch.rand(3, 1)"
).replace("torch.randn(2, 70), torch.rand(2, 1)", "torch.randn(2, 540) * 4.0, torch.rand(2, 1)")

# a plain sum partial (root mean square), rows of 600 and 540
CHUNKED_RMS = """
class Model(nn.Module):
    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + 1e-6)


def get_inputs():
    return [torch.randn(8, 65536)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 600)]


def get_cpu_init_inputs():
    return []


def get_cpu_shape_variants():
    return [[torch.randn(2, 540)]]
"""

CHUNKED = {"row.BLOCK_N": 256, "row.num_warps": 1}

# the same cases in one launch: a program per tile (16 wide), so 105 = 6 x 16 + 9 is 7 programs per row. The
# interpreter runs programs one after another, so every program but a row's last finds the row incomplete
# after its one check and computes the other chunks' partials itself; the last merges what the others
# stored: both paths of the kernel are checked against the reference
ONE_CASES = [
    ("groupnorm-one-launch", GROUPNORM, {}),
    ("layernorm-epilogue-one-launch", LAYERNORM_EPILOGUE, {"row.BLOCK_N": 32}),  # 7 programs per row, as 105/16
    ("row-stats-outputs-one-launch", ROW_STATS, {}),  # per-row outputs stored by chunk 0
    ("softmax-row-temperature-one-launch", ROW_TEMPERATURE, {}),  # (max, sum of exp) partials, a per-row input
    ("groupnorm-channel-tiles-one-launch", CHANNEL_TILES, {}),  # one weight per tile (CH_TILE) and the gather
    # the fallback's chunks (FB = 64 < BLOCK_N = 256): Welford, (max, sum of exp) and plain sum merges
    ("groupnorm-one-launch-chunked-fallback", CHUNKED_GROUPNORM, CHUNKED),
    ("softmax-one-launch-chunked-fallback", CHUNKED_TEMPERATURE, CHUNKED),
    ("rms-one-launch-chunked-fallback", CHUNKED_RMS, CHUNKED),
]


@pytest.mark.interp
@pytest.mark.slow
@pytest.mark.parametrize(("name", "body", "genes"), ONE_CASES, ids=[c[0] for c in ONE_CASES])
def test_split_rows_in_one_launch_are_verified(
    writer: TemplateWriter, tmp_path: Path, name: str, body: str, genes: dict
):
    path = operator_file(tmp_path, body)
    genes = {"row.split": 4, "row.combine": "one_kernel", "row.BLOCK_N": 16, **genes}
    source = writer.render(request_for(path).spec, genes)
    assert one_launch(source), source
    assert f"FB={min(genes['row.BLOCK_N'], 64 * genes.get('row.num_warps', 8))}," in source
    verdict = evaluate(path, source, name)
    assert verdict.verified, explain(verdict)


@pytest.mark.interp
@pytest.mark.slow
def test_looped_group_norm_reads_one_weight_per_tile(writer: TemplateWriter, tmp_path: Path):
    path = operator_file(tmp_path, CHANNEL_TILES)
    source = writer.render(request_for(path).spec, {"row.split": 1, "row.max_single_n": 0, "row.BLOCK_N": 16})
    assert "CH_TILE=HW % 16 == 0" in source and "start // HW, mask=row_mask" in source
    verdict = evaluate(path, source, "groupnorm-looped-channel-tiles")
    assert verdict.verified, explain(verdict)


EXAMPLE_CASES = [
    ("rmsnorm-sum-of-squares", "rmsnorm.py"),  # plain sum partials
    ("softmax-online", "softmax.py"),  # (max, sum of exp) partials
]


@pytest.mark.interp
@pytest.mark.slow
@pytest.mark.parametrize(("name", "example"), EXAMPLE_CASES, ids=[c[0] for c in EXAMPLE_CASES])
def test_split_rows_of_other_row_norms_are_verified(writer: TemplateWriter, name: str, example: str):
    path = EXAMPLES / example
    source = writer.render(request_for(path).spec, {"row.split": 3, "row.BLOCK_N": 16})
    assert split_launch(source)
    verdict = evaluate(path, source, name)
    assert verdict.verified, explain(verdict)


def test_partials_merge_welford_statistics(writer: TemplateWriter, tmp_path: Path):
    source = writer.render(request_for(operator_file(tmp_path, GROUPNORM)).spec, {"row.split": 8})
    partial = source.split("def _op_split_partial_kernel")[1].split("@triton.jit")[0]
    finish = source.split("def _op_split_fwd_kernel")[1].split("def op_forward")[0]
    assert "part = part_ptr + (rows * S + sid) * 3" in partial  # count, mean, M2 per chunk
    assert "weight" not in partial  # the affine parameters are read by the merge kernel only
    assert "_pm2 + x_groups_sum_pcount * x_groups_sum_pdev * x_groups_sum_pdev" in finish  # Chan's merge of M2
    assert "(rows % G) * CPG + cols // HW" in finish  # per-channel weight inside the group's row
    assert "(rows % G) * CPG + start // HW, mask=row_mask" in finish  # ... one per tile when CH_TILE
    assert "CH_TILE=HW % 2048 == 0 and chunk % 2048 == 0" in source
    assert "partial = torch.empty((M, splits, 3)" in source and "atomic" not in source


def test_fallback_when_a_reduction_needs_two_passes_or_has_no_merge(writer: TemplateWriter):
    # rows past one tile (max_single_n 0: every row looped), where a split would otherwise apply
    two_pass = writer.render(
        request_for(EXAMPLES / "layernorm.py").spec,
        {"row.split": 8, "row.online_reduction": False, "row.max_single_n": 0},
    )
    assert "_split_" not in two_pass and "_loop_fwd_kernel" in two_pass  # variance after the mean: no split
    argmax = writer.render(request_for(EXAMPLES / "argmax_rows.py").spec, {"row.split": 8})
    assert "_split_" not in argmax and "_fwd_kernel" in argmax
    one = writer.render(request_for(EXAMPLES / "groupnorm.py").spec, {"row.split": 1})
    # the code (not the docstring, which names the gene row.split=1): no split kernels, no split sizing
    assert "_split_" not in one and "splits" not in identifiers(one) and "_fwd_kernel" in one


def helper_scope(rows: int, n: int) -> dict:
    """A namespace with the host helpers a generated launcher calls, and the problem's sizes."""
    from foundry.codegen.kernels import HOST_HELPERS

    scope = {"triton": triton, "M": rows, "N": n}
    for source in HOST_HELPERS.values():
        exec(source, scope)
    return scope


def auto_splits(source: str, rows: int, n: int) -> int:
    """Run the launcher's own sizing lines for a (rows, n) problem."""
    lines = [line.strip() for line in source.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("splits = min("))
    scope = helper_scope(rows, n)
    exec("\n".join(lines[start : start + 4]), scope)
    return scope["splits"]


def test_one_launch_waits_a_bounded_time_and_falls_back_to_the_input(writer: TemplateWriter, tmp_path: Path):
    source = writer.render(
        request_for(operator_file(tmp_path, GROUPNORM)).spec,
        {"row.split": 8, "row.combine": "one_kernel", "row.BLOCK_N": 2048},
    )
    source = code(source)  # a statement per line, as emitted (ruff wraps long ones)
    one = source.split("def _op_split_one_kernel")[1].split("@triton.jit")[0]
    arrive = one.index("tl.atomic_add(sync_ptr + row, 1, sem='release')")
    assert one.index("tl.store(part + 2, x_groups_sum_m2") < one.index("tl.debug_barrier()") < arrive
    assert "while (arrived < S) & (spins < SPIN_LIMIT):" in one  # bounded
    fallback = one.split("if arrived < S:")[1].split("tl.debug_barrier()")[0]
    # the row's other chunks from the input, in names of their own (the tile x_groups stays as loaded),
    # FB elements at a time (never a second whole tile in registers), merged with Chan's formula
    assert "for other in range(0, S):" in fallback and "x_groups =" not in fallback
    assert "for cstart in range(start_o, tl.minimum(start_o + BLOCK_N, N), FB):" in fallback
    assert (
        "x_groups_c_o = tl.load(x_groups_ptr + row_off + cols_c_o" in fallback and "arange(0, BLOCK_N)" not in fallback
    )
    assert "x_groups_sum_m2_o += x_groups_sum_m2_c_o + x_groups_sum_delta_o * x_groups_sum_delta_o * (" in fallback
    assert "part_o = part_ptr + (rows * S + other) * 3" in fallback and ", FB=512," in source
    merge = one.split("tl.debug_barrier()")[-1]
    assert "cache_modifier='.cg'" in merge and "tl.sum(x_groups_sum_pcount, axis=0)" in merge  # scalar statistics
    assert "x_groups_ptr" not in merge  # the chunk is written from the tile in registers, not read again
    assert (
        "arrived = torch.zeros((M,)" in source
        and "spin_limit = 65536 if x_groups.device.type == 'cuda' else 1" in source
    )


def launch_choice(source: str, rows: int, n: int) -> str:
    """Run the launcher's sizing lines for a (rows, n) problem: which split path it takes."""
    lines = [line.strip() for line in source.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("splits = min("))
    stop = next(i for i, line in enumerate(lines) if line.startswith("if one_launch:"))
    scope = helper_scope(rows, n)
    exec("\n".join(lines[start:stop]), scope)
    return "one" if scope["one_launch"] else "two" if scope["splits"] > 1 else "whole"


def test_one_launch_takes_rows_of_two_to_64_tiles(writer: TemplateWriter):
    genes = {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4}
    source = writer.render(request_for(EXAMPLES / "groupnorm.py").spec, genes)
    assert launch_choice(source, 128, 262144) == "one"  # group norm's 128 rows of 32 tiles: one read of each row
    assert launch_choice(source, 2, 64 * 8192) == "one"
    assert launch_choice(source, 2, 64 * 8192 + 1) == "two"  # more tiles than SMs might hold: two kernels
    assert launch_choice(source, 16384, 4096) == "whole"  # many rows: one program per row


def test_renamed_statements_leave_keyword_arguments_and_other_names():
    from foundry.codegen.rowsplit import renamed

    lines = ["mask = cols < N", "v = tl.load(p + cols, mask=mask, other=0.0)", "acc += v", "s = acc + masked"]
    assert renamed(lines, "_o") == [
        "mask_o = cols < N",
        "v_o = tl.load(p + cols, mask=mask_o, other=0.0)",
        "acc_o += v_o",
        "s_o = acc_o + masked",
    ]


def test_auto_splits_fill_the_gpu_only_for_few_long_rows(writer: TemplateWriter):
    source = writer.render(request_for(EXAMPLES / "groupnorm.py").spec, {"row.split": "auto"})
    assert auto_splits(source, 128, 262144) == 8  # 1024 programs for 132 SMs, chunks of 32K elements
    assert auto_splits(source, 16, 262144) == MAX_SPLITS
    assert auto_splits(source, 4, 65536) == 16  # the groupnorm-auto-real-tiles case above splits too
    assert auto_splits(source, 1, 20000) == 5  # chunks of at least 4K elements: 4096 x 4 + 3616
    assert auto_splits(source, 16384, 4096) == 1  # many rows: one program per row
    assert auto_splits(source, 128, 4096) == 1  # short rows
    assert auto_splits(source, FEW_ROWS, MIN_SPLIT_N * 4) == 1


def test_generation_zero_proposes_split_rows_for_few_long_rows(writer: TemplateWriter, tmp_path: Path):
    path = operator_file(tmp_path, GROUPNORM)
    even = writer.propose(request_for(path, count=2, island=0))
    odd = writer.propose(request_for(path, count=2, island=1))
    assert [c.genes["row.split"] for c in even] == [1, "auto"]
    assert [c.genes["row.split"] for c in odd] == ["auto", "auto"]  # both kinds measured even at one child each
    assert one_launch(odd[0].source) and "split rows in one launch" in odd[0].notes
    assert odd[0].genes["row.BLOCK_N"] == 8192 and odd[0].genes["row.num_warps"] == 4  # kept by genes.repair
    assert split_launch(odd[1].source) and not one_launch(odd[1].source)
    many_rows = writer.propose(request_for(EXAMPLES / "layernorm.py", count=4))
    assert all(c.genes["row.split"] == 1 or "mutation" in c.notes for c in many_rows)
    assert not any("split rows" in c.notes for c in many_rows)


def test_mutation_toggles_and_resizes_the_split(writer: TemplateWriter):
    path = EXAMPLES / "groupnorm.py"
    [base] = writer.propose(request_for(path))
    parent = base.model_copy(update={"id": "parent", "genes": {**base.genes, "row.split": 16}})
    seen = set()
    for seed in range(30):
        for c in writer.propose(request_for(path, parent=parent, generation=1, count=6, seed=seed)):
            seen.add(c.genes["row.split"])
    assert 16 in seen and len(seen - {16}) >= 2, seen  # stepped to a neighbour or redrawn
    assert seen <= set(G.SPACE["row.split"])
    assert G.step("row.split", 16, 1) == 32 and G.step("row.split", 2, -1) == 1
