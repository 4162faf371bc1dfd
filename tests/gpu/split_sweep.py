"""Time group norm's split-row variants (genes row.split x BLOCK_N x warps x welford) on the GPU, beside
eager and torch.compile, with each variant's max error: a developer's sweep to pick the split-row defaults (it runs
the generated kernels in this process; verdicts of record come from the evaluator, via `foundry bench`).

    python3 tests/gpu/split_sweep.py [examples/ops/groupnorm.py]      (from the repo root; gpu_pass.sh sweep)
"""

import importlib.util
import itertools
import sys
import tempfile

import torch
import triton
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

gpu = torch.cuda.is_available()
op = load_operator(sys.argv[1] if len(sys.argv) > 1 else "examples/ops/groupnorm.py")
dev = "cuda" if gpu else "cpu"
ref = op.model_cls(*op.init_inputs(small=not gpu)).to(dev)
with torch.no_grad():  # away from ones and zeros, so that a wrong channel's weight shows in the error
    for p in ref.parameters():
        p.add_(0.1 * torch.randn_like(p))
x = op.inputs(small=not gpu)[0].to(dev)
writer = TemplateWriter(loader=lambda _: op)
bench = triton.testing.do_bench if gpu else (lambda fn: (fn(), float("nan"))[1])
with torch.no_grad():
    want = ref(x)
    print(f"eager {bench(lambda: ref(x)):.3f} ms", flush=True)
    if gpu:
        comp = torch.compile(ref)
        comp(x)
        print(f"torch.compile {bench(lambda: comp(x)):.3f} ms", flush=True)
    moved = 2 * x.numel() * x.element_size()  # read once, written once: the floor of any kernel's traffic
    variants = itertools.product((1, 8, 16, "auto"), (1024, 2048, 4096), (4, 8), ("tile", "lane"))
    for split, block_n, warps, welford in variants:
        genes = {"row.split": split, "row.BLOCK_N": block_n, "row.num_warps": warps, "row.welford": welford}
        path = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
        path.write(writer.render(op.spec, genes))
        path.close()
        spec = importlib.util.spec_from_file_location(f"cand_{split}_{block_n}_{warps}_{welford}", path.name)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        model = mod.ModelNew(*op.init_inputs(small=not gpu)).to(dev)
        model.load_state_dict(ref.state_dict())
        err = (model(x) - want).abs().max().item()
        ms = bench(lambda m=model: m(x))
        rate = f", {moved / ms / 1e9:.2f} TB/s" if gpu else ""
        print(f"{' '.join(f'{k}={v}' for k, v in genes.items())}: {ms:.3f} ms{rate}, max err {err:.1e}", flush=True)
