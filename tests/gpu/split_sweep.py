"""Time group norm's split-row variants (genes row.split x BLOCK_N x warps x welford) on the GPU, beside
eager and torch.compile, with each variant's max error and bandwidth: a developer's sweep to pick the
split-row defaults (through gene_sweep.py, in this process; verdicts of record come from the evaluator).

    python3 tests/gpu/split_sweep.py [examples/ops/groupnorm.py]      (from the repo root; gpu_pass.sh sweep)
"""

import itertools
import sys

from gene_sweep import sweep

variants = itertools.product((1, 8, 16, "auto"), (1024, 2048, 4096), (4, 8), ("tile", "lane"))
gene_sets = [
    {"row.split": split, "row.BLOCK_N": block_n, "row.num_warps": warps, "row.welford": welford}
    for split, block_n, warps, welford in variants
]
# read once, written once: the floor of any kernel's traffic
sweep(sys.argv[1] if len(sys.argv) > 1 else "examples/ops/groupnorm.py", gene_sets, lambda xs: 2 * xs[0].nbytes)
