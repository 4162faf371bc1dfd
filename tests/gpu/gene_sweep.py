"""Time template variants of one operator, one per gene set given as JSON, beside eager and torch.compile
(cuDNN TF32 off, as `foundry bench` runs them), each with its max error against the eager output: a
developer's sweep to choose defaults and seeds. It runs the generated kernels in this process; verdicts
of record come from the evaluator, through `foundry bench`.

    python3 tests/gpu/gene_sweep.py examples/ops/conv_depthwise_2d_hardswish.py \
        '{"conv.algo": "direct"}' '{"conv.algo": "plane", "conv.BLOCK_N": 16, "conv.num_warps": 4}'

Without a GPU it runs the small inputs under the Triton interpreter and prints errors only.
"""

import importlib.util
import json
import sys
import tempfile

import torch
import triton
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

gpu = torch.cuda.is_available()
if len(sys.argv) < 3:
    sys.exit(__doc__)
op = load_operator(sys.argv[1])
dev = "cuda" if gpu else "cpu"
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.manual_seed(0)
ref = op.model_cls(*op.init_inputs(small=not gpu)).to(dev).eval()
with torch.no_grad():  # away from the initial values, so that a wrong channel's weight shows in the error
    for p in ref.parameters():
        p.add_(0.1 * torch.randn_like(p))
inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in op.inputs(small=not gpu)]
writer = TemplateWriter(loader=lambda _: op)
bench = triton.testing.do_bench if gpu else (lambda fn: (fn(), float("nan"))[1])
with torch.no_grad():
    want = ref(*inputs)
    print(f"eager {bench(lambda: ref(*inputs)):.3f} ms", flush=True)
    if gpu:
        comp = torch.compile(ref)
        comp(*inputs)
        print(f"torch.compile {bench(lambda: comp(*inputs)):.3f} ms", flush=True)
    for k, text in enumerate(sys.argv[2:]):
        genes = json.loads(text)
        path = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
        path.write(writer.render(op.spec, genes))
        path.close()
        spec = importlib.util.spec_from_file_location(f"variant_{k}", path.name)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        model = mod.ModelNew(*op.init_inputs(small=not gpu)).to(dev)
        model.load_state_dict(ref.state_dict())
        try:
            err = (model(*inputs) - want).abs().max().item()
            ms = bench(lambda m=model: m(*inputs))
        except Exception as exc:  # a variant that fails says so and the sweep goes on
            print(f"{text}: failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            continue
        print(f"{text}: {ms:.3f} ms, max err {err:.1e}", flush=True)
