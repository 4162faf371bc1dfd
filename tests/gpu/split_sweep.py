"""Time group norm's split-row variants (genes row.split x combine x BLOCK_N x warps) on the GPU, beside
eager and torch.compile, with each variant's max error and bandwidth: a developer's sweep to pick the
split-row defaults (through gene_sweep.py, in this process; verdicts of record come from the evaluator).

    python3 tests/gpu/split_sweep.py [examples/ops/groupnorm.py]      (from the repo root; gpu_pass.sh sweep)
"""

import itertools
import sys

from gene_sweep import sweep

# two kernels (partials, then merge): the split counts and tiles of the 2026-12-03 sweep's fastest, per-lane
# statistics; one launch (combine=one_kernel): a program per tile, sized by BLOCK_N alone
two = itertools.product(("auto", 8), (1024, 2048), (4, 8))
one = itertools.product((4096, 8192, 16384), (4, 8, 16))  # 2048 would be 128 tiles per row: two kernels
gene_sets = [
    {"row.split": split, "row.BLOCK_N": block_n, "row.num_warps": warps, "row.welford": "lane"}
    for split, block_n, warps in two
] + [{"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": b, "row.num_warps": w} for b, w in one]
# read once, written once: the floor of any kernel's traffic
sweep(sys.argv[1] if len(sys.argv) > 1 else "examples/ops/groupnorm.py", gene_sets, lambda xs: 2 * xs[0].nbytes)
