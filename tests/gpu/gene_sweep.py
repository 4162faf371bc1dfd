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
from collections.abc import Callable
from typing import Any

import torch
import triton
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

GPU = torch.cuda.is_available()
DEV = "cuda" if GPU else "cpu"


def bench(fn: Callable[[], Any]) -> float:
    if GPU:
        return triton.testing.do_bench(fn)
    fn()
    return float("nan")


def sweep(path: str, gene_sets: list[dict[str, Any]], moved_bytes: Callable[[list[Any]], int] | None = None) -> None:
    """Print eager's and torch.compile's time, then each gene set's time and max error (and, given
    moved_bytes(inputs), the achieved bandwidth)."""
    op = load_operator(path)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    ref = op.model_cls(*op.init_inputs(small=not GPU)).to(DEV).eval()
    with torch.no_grad():  # away from the initial values, so that a wrong channel's weight shows in the error
        for p in ref.parameters():
            p.add_(0.1 * torch.randn_like(p))
    inputs = [x.to(DEV) if isinstance(x, torch.Tensor) else x for x in op.inputs(small=not GPU)]
    writer = TemplateWriter(loader=lambda _: op)
    with torch.no_grad():
        want = ref(*inputs)
        print(f"eager {bench(lambda: ref(*inputs)):.3f} ms", flush=True)
        if GPU and moved_bytes:  # the device's copy bandwidth, the yardstick of memory-bound kernels
            src = inputs[0]
            dst = torch.empty_like(src)
            copy_ms = bench(lambda: dst.copy_(src))
            print(f"copy of the first input {copy_ms:.3f} ms, {2 * src.nbytes / copy_ms / 1e9:.2f} TB/s", flush=True)
        if GPU:
            comp = torch.compile(ref)
            comp(*inputs)
            print(f"torch.compile {bench(lambda: comp(*inputs)):.3f} ms", flush=True)
        for k, genes in enumerate(gene_sets):
            label = " ".join(f"{name}={value}" for name, value in genes.items()) or "defaults"
            source = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
            source.write(writer.render(op.spec, genes))
            source.close()
            spec = importlib.util.spec_from_file_location(f"variant_{k}", source.name)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            model = mod.ModelNew(*op.init_inputs(small=not GPU)).to(DEV)
            model.load_state_dict(ref.state_dict())
            try:
                err = (model(*inputs) - want).abs().max().item()
                ms = bench(lambda m=model: m(*inputs))
            except Exception as exc:  # a variant that fails says so and the sweep goes on
                print(f"{label}: failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            rate = f", {moved_bytes(inputs) / ms / 1e9:.2f} TB/s" if GPU and moved_bytes else ""
            print(f"{label}: {ms:.3f} ms{rate}, max err {err:.1e}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sweep(sys.argv[1], [json.loads(text) for text in sys.argv[2:]])
