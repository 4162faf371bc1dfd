"""The genes of template candidates: what each kernel kind lets the search choose, defaults chosen
for an H200-class GPU, and repairs that keep a gene set inside hardware limits.

Gene names are namespaced by kernel kind ("row.BLOCK_N", "matmul.precision"); "plan.*" genes move
fusion boundaries. A candidate carries only the genes of the kernel kinds its plan uses.
"""

from __future__ import annotations

from typing import Any

Gene = int | float | str | bool

SPACE: dict[str, tuple[Gene, ...]] = {
    "plan.fuse_epilogue": (True, False),
    "plan.merge_reductions": (True, False),
    "pointwise.BLOCK_SIZE": (256, 512, 1024, 2048, 4096, 8192),
    "pointwise.num_warps": (1, 2, 4, 8, 16),
    "pointwise.layout": ("rows", "flat"),  # rows: 2-D grid, broadcast indices computed once per row
    "row.BLOCK_M": (1, 2, 4, 8, 16),
    "row.BLOCK_N": (256, 512, 1024, 2048, 4096, 8192),
    "row.max_single_n": (0, 1024, 2048, 4096, 8192, 16384, 32768),
    "row.num_warps": (1, 2, 4, 8, 16, 32),
    "row.online_reduction": (True, False),
    # programs per row: 1 = one program walks the whole row; more = partial statistics per chunk, then a
    # merge-and-normalize kernel (few, very long rows: group norm); auto = sized by rows and SM count
    "row.split": (1, 2, 4, 8, 16, 32, 64, "auto"),
    # split rows: the row's partials merged by a second kernel, or in the same launch, a program per tile
    # waiting for the row's other tiles (the row read once, not twice; rows of up to 64 tiles)
    "row.combine": ("two_kernels", "one_kernel"),
    # looped mean/variance: merge each tile's statistics into the row's (tile) or keep them per lane and
    # merge the lanes once after the loop (lane: no block-wide reduction per tile)
    "row.welford": ("tile", "lane"),
    # split rows in one launch: programs per SM its register cap aims for (maxnreg from the warps; 0: the
    # compiler's own choice; rowsplit.register_cap_opt). Group norm at 8192 over 4 warps: 128 registers (4
    # programs per SM) 0.0793-0.0808 ms, capped at 96 (5 per SM) 0.0780-0.0793 (H200, 2026-12-04)
    "row.occupancy": (0, 2, 3, 4, 5, 6, 8),
    "col.BLOCK_R": (4, 8, 16, 32, 64),
    "col.BLOCK_I": (16, 32, 64, 128, 256),
    "col.num_warps": (1, 2, 4, 8, 16),
    # programs per strip of the inner dims along the reduced dims: 1 = one program walks them all; more =
    # partials per chunk of rows, merged in order by a second kernel (few strips over many rows: a bias gradient)
    "col.split": (1, 2, 4, 8, 16, 32, 64),
    "full.BLOCK_SIZE": (512, 1024, 2048, 4096, 8192),
    "full.partials": (132, 264, 528, 1056, 2112),
    "full.num_warps": (2, 4, 8, 16),
    "matmul.BLOCK_M": (16, 32, 64, 128, 256),
    "matmul.BLOCK_N": (16, 32, 64, 128, 256),
    "matmul.BLOCK_K": (16, 32, 64, 128),
    "matmul.GROUP_M": (1, 4, 8, 16),
    "matmul.num_warps": (2, 4, 8),
    "matmul.num_stages": (1, 2, 3, 4, 5),
    "matmul.precision": ("ieee", "tf32x3", "split3", "tf32"),
    "conv.algo": ("auto", "gemm", "direct", "plane"),  # GEMM, direct taps, per-channel planes; auto: by group width
    "conv.BLOCK_M": (32, 64, 128, 256),  # output positions (N * spatial) per program; plane: tile columns
    "conv.BLOCK_N": (16, 32, 64, 128),  # output channels per program; plane: tile rows
    "conv.BLOCK_K": (16, 32, 64),  # in-channels x taps per GEMM step
    "conv.num_warps": (2, 4, 8),
    "conv.num_stages": (1, 2, 3, 4),
    "conv.precision": ("ieee", "tf32x3"),  # fp32 schemes inside the fp32 tolerance only
    "conv.k_order": ("channel", "tap"),  # GEMM's K loop: one flat channel x tap range, or taps outside channels
    "conv.layout": ("nchw", "channels_last"),  # GEMM's input as given, or staged with in-channels contiguous
    "conv.split_k": (1, 2, 4, 8),  # GEMM programs sharing an output tile's K range (partials + epilogue kernel)
    "conv.library": (False, True),  # hybrid policy only: torch's convolution + the epilogue in Triton
    "pool.BLOCK_SIZE": (128, 256, 512, 1024),
    "pool.num_warps": (2, 4, 8),
    "scan.BLOCK_M": (1, 2, 4, 8),  # rows per program
    "scan.BLOCK_N": (256, 512, 1024, 2048, 4096),  # the tile a row is scanned in (with a carry across tiles)
    "scan.num_warps": (1, 2, 4, 8),
    "gather.BLOCK_SIZE": (256, 512, 1024, 2048, 4096),  # output elements per program (one per lane)
    "gather.num_warps": (1, 2, 4, 8),
    "scatter.BLOCK_SIZE": (256, 512, 1024, 2048, 4096),  # source elements per program (one atomic add per lane)
    "scatter.num_warps": (1, 2, 4, 8),
    "sort.TILE": (1024, 2048, 4096, 8192),  # elements per program: rows per program = TILE // BLOCK_N (at least 1)
    "sort.BLOCK_N": (256, 512, 1024, 2048, 4096),  # topk and cummax: the tile a row is walked in (a sort: the row)
    "sort.num_warps": (1, 2, 4, 8),
    # training operators: what the forward saves for the backward (codegen/training.py): the inputs and parameters
    # only (the backward recomputes what it reads), or also the forward's outputs and per-row statistics
    "train.save": ("inputs", "forward"),
}

# Starting points: 16-byte accesses per thread for memory-bound kernels, whole rows in registers up
# to 16K fp32 elements, 128x128x32 matmul tiles with 3 stages (fits 227 KB shared memory in fp32).
DEFAULTS: dict[str, Gene] = {
    "plan.fuse_epilogue": True,
    "plan.merge_reductions": True,
    "pointwise.BLOCK_SIZE": 1024,
    "pointwise.num_warps": 4,
    "pointwise.layout": "rows",
    "row.BLOCK_M": 1,
    "row.BLOCK_N": 2048,
    "row.max_single_n": 16384,
    "row.num_warps": 8,
    "row.online_reduction": True,
    "row.split": 1,
    "row.combine": "two_kernels",
    # lanes: on the H200 every one of 24 group-norm variants (split, BLOCK_N, warps) ran 1.5-4.4x faster with
    # per-lane statistics than with a block-wide reduction per tile (tests/gpu/split_sweep.py, 2026-12-03)
    "row.welford": "lane",
    "row.occupancy": 0,
    "col.BLOCK_R": 32,
    "col.BLOCK_I": 128,
    "col.num_warps": 4,
    "col.split": 1,  # generation 0 splits the rows where the strips are too few to fill the GPU
    "full.BLOCK_SIZE": 2048,
    "full.partials": 1056,
    "full.num_warps": 8,
    "matmul.BLOCK_M": 128,
    "matmul.BLOCK_N": 128,
    "matmul.BLOCK_K": 32,
    "matmul.GROUP_M": 8,
    "matmul.num_warps": 8,
    "matmul.num_stages": 3,
    "matmul.precision": "ieee",  # exact; the search tries tf32x3/split3 (tensor cores, ~fp32 error)
    "conv.algo": "auto",
    "conv.BLOCK_M": 128,
    "conv.BLOCK_N": 64,
    "conv.BLOCK_K": 32,
    "conv.num_warps": 8,
    "conv.num_stages": 2,
    "conv.precision": "ieee",  # exact; the search tries tf32x3 (tensor cores, ~fp32 error)
    "conv.k_order": "channel",  # tap-major was slower for every 2-d conv on the H200 (2026-12-03)
    "conv.layout": "nchw",  # channels_last (with the tap-major K loop) is generation 0's fitted seed
    "conv.split_k": 1,  # generation 0 splits K where the output tiles are too few to fill the GPU
    "conv.library": False,
    "pool.BLOCK_SIZE": 256,
    "pool.num_warps": 4,
    "scan.BLOCK_M": 1,
    "scan.BLOCK_N": 2048,
    "scan.num_warps": 4,
    "gather.BLOCK_SIZE": 1024,
    "gather.num_warps": 4,
    "scatter.BLOCK_SIZE": 1024,
    "scatter.num_warps": 4,
    "sort.TILE": 4096,  # short rows share a program (a sort's network costs the same for one row or many)
    "sort.BLOCK_N": 1024,
    "sort.num_warps": 4,
    "train.save": "forward",  # a norm's mean and rstd are a few bytes per row; recomputing them is a pass over x
}
HYBRID_ONLY = frozenset({"conv.library"})  # genes a strict-policy candidate never carries

SHARED_MEMORY_BYTES = 227 * 1024  # H100/H200 per-block opt-in limit
MAX_TILE_ELEMENTS = 65536  # per program, fp32 values live at once in registers (row/col kernels)


def relevant(kinds: set[str], policy: str = "strict") -> list[str]:
    """Gene names that matter for a plan using these kernel kinds (library genes only in hybrid policy)."""
    names = [n for n in SPACE if n.split(".")[0] in kinds and (policy == "hybrid" or n not in HYBRID_ONLY)]
    if kinds & {"matmul", "conv", "pool"}:
        names.append("plan.fuse_epilogue")
    if kinds & {"row", "col", "full"}:
        names.append("plan.merge_reductions")
    return names


def defaults(kinds: set[str], policy: str = "strict") -> dict[str, Gene]:
    return {n: DEFAULTS[n] for n in relevant(kinds, policy)}


def allowed(name: str, precision_class: str) -> tuple[Gene, ...]:
    values = SPACE[name]
    if name == "matmul.precision" and precision_class not in ("tf32", "fp16", "bf16"):
        values = tuple(v for v in values if v != "tf32")
    return values


def step(name: str, value: Gene, direction: int, precision_class: str = "fp32") -> Gene:
    """The neighbouring value of a gene (direction +1 / -1), clamped to its range."""
    values = allowed(name, precision_class)
    if value not in values:
        return DEFAULTS[name]
    i = values.index(value)
    return values[max(0, min(len(values) - 1, i + direction))]


def repair(genes: dict[str, Any], element_bytes: int = 4) -> dict[str, Any]:
    """Clamp a gene set to what compiles without spilling on the target (tile budgets, smem)."""
    g = dict(genes)
    if "row.BLOCK_M" in g:
        while g["row.BLOCK_M"] > 1 and g["row.BLOCK_M"] * g["row.BLOCK_N"] > MAX_TILE_ELEMENTS // 4:
            g["row.BLOCK_M"] //= 2
        while g["row.BLOCK_M"] > 1 and g["row.BLOCK_M"] * max(g["row.max_single_n"], 1) > MAX_TILE_ELEMENTS:
            g["row.BLOCK_M"] //= 2
        # Values per thread. Static sm_90 compiles (2026-12-04): group norm's looped kernel (per-lane Welford
        # statistics) has no spills at 32 fp32 values per thread (206 registers), spills at 64 (328 bytes),
        # and at 256 spilled 7.8 KB and took 13 s to compile here (on the H200 machine one group-norm
        # candidate's compile took 64-68 s beside 7 others and held up its whole generation; its genes were
        # not logged). Softmax's one-pass kernel: no spills at 128 per thread, 328 bytes at 256, 2.8 KB at
        # 512. Tiles shrink to fit (rows longer than max_single_n go to the looped kernel).
        # Split rows in one launch hold one tile per program, with no per-lane statistics: 64 values per
        # thread compile without spills (8192 over 4 warps: 124 registers on the H200's triton 3.6), and on
        # the H200 that tile was among the fastest one-launch group norms (0.082 ms, 16384 over 8 warps 0.083,
        # 8192 over 8 0.087; 2026-12-04, results-groupnorm-one-launch-h200.md). The module's looped kernels
        # take the same tile where they run.
        threads = 32 * g.get("row.num_warps", DEFAULTS["row.num_warps"])
        one_launch = g.get("row.combine") == "one_kernel" and g.get("row.split", 1) != 1
        if not one_launch and g.get("row.occupancy"):
            # the register cap acts on the one-launch kernel only: elsewhere the gene would change nothing but
            # the candidate's name (a second evaluation of the same code)
            g["row.occupancy"] = 0
        per_thread = 64 if one_launch else 32
        while (
            "row.BLOCK_N" in g
            and g["row.BLOCK_N"] > SPACE["row.BLOCK_N"][0]
            and g["row.BLOCK_M"] * g["row.BLOCK_N"] > per_thread * threads
        ):
            g["row.BLOCK_N"] //= 2
        while g.get("row.max_single_n", 0) > 0 and g["row.BLOCK_M"] * g["row.max_single_n"] > 128 * threads:
            g["row.max_single_n"] //= 2
    if "col.BLOCK_R" in g:
        while g["col.BLOCK_R"] > 4 and g["col.BLOCK_R"] * g["col.BLOCK_I"] > MAX_TILE_ELEMENTS // 8:
            g["col.BLOCK_R"] //= 2
    if "matmul.BLOCK_M" in g:

        def smem() -> int:
            tile = (g["matmul.BLOCK_M"] + g["matmul.BLOCK_N"]) * g["matmul.BLOCK_K"] * element_bytes
            return tile * max(1, g["matmul.num_stages"])

        while smem() > SHARED_MEMORY_BYTES and g["matmul.num_stages"] > 1:
            g["matmul.num_stages"] -= 1
        while smem() > SHARED_MEMORY_BYTES and g["matmul.BLOCK_K"] > 16:
            g["matmul.BLOCK_K"] //= 2
        if g["matmul.BLOCK_M"] * g["matmul.BLOCK_N"] >= 256 * 128 and g["matmul.num_warps"] < 8:
            g["matmul.num_warps"] = 8  # accumulator registers: 32K fp32 over fewer warps spills
        if g.get("matmul.precision") in ("tf32x3", "split3"):
            # hi/lo operand copies: sm_90 compiles of 128x128 tiles with 8 warps spill (static compile facts)
            while g["matmul.BLOCK_M"] * g["matmul.BLOCK_N"] > 1024 * g["matmul.num_warps"]:
                if g["matmul.BLOCK_N"] >= g["matmul.BLOCK_M"]:
                    g["matmul.BLOCK_N"] //= 2
                else:
                    g["matmul.BLOCK_M"] //= 2
    if "conv.BLOCK_M" in g:

        def conv_smem() -> int:
            tile = (g["conv.BLOCK_M"] + g["conv.BLOCK_N"]) * g["conv.BLOCK_K"] * element_bytes
            return tile * max(1, g["conv.num_stages"])

        while conv_smem() > SHARED_MEMORY_BYTES and g["conv.num_stages"] > 1:
            g["conv.num_stages"] -= 1
        # fp32 accumulators: up to 64 per thread. Static sm_90 compiles of the ieee gemm kernel spill past
        # 32 (128x64 with 4 warps, 128x128 with 8), but on the H200 the 3xTF32 128x128 tile over 8 warps was
        # the fastest on the three convolution examples with 128+ output channels tried, 1.3-1.6x faster
        # than 64x128 (tests/gpu/gene_sweep.py, 2026-12-03)
        if g["conv.BLOCK_M"] * g["conv.BLOCK_N"] > 2048 * g["conv.num_warps"]:
            g["conv.num_warps"] = 8
        while g["conv.BLOCK_M"] * g["conv.BLOCK_N"] > 2048 * g["conv.num_warps"]:
            if g["conv.BLOCK_M"] > 32 and g["conv.BLOCK_M"] >= g["conv.BLOCK_N"]:
                g["conv.BLOCK_M"] //= 2
            elif g["conv.BLOCK_N"] > 16:
                g["conv.BLOCK_N"] //= 2
            else:
                break
    return g
