"""Compile time, registers and spills of template variants of one operator, compiled for sm_90 on this machine
(no GPU needed): the operator's forward runs on meta tensors at full size, every Triton launch is recorded
instead of run, and each recorded kernel goes through the evaluator's static compile. A developer's tool for
register budgets in codegen/genes.py:repair (which this does not apply: the gene sets are rendered as given).

    python3 tools/static_facts.py examples/ops/groupnorm.py '{}' '{"row.num_warps": 1}'
"""

import importlib.util
import json
import sys
import tempfile
import time

import torch
from foundry.evaluate.runtime_guard import describe_args, describe_kwargs
from foundry.evaluate.static_compile import compile_facts
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter
from triton.runtime.jit import JITFunction


def main() -> None:
    op = load_operator(sys.argv[1])
    writer = TemplateWriter(loader=lambda _: op)
    launched: list[tuple[object, tuple, dict]] = []

    def record(fn_self, *args, grid, warmup, **kwargs):  # noqa: ANN001, ANN202, ARG001 - JITFunction.run's shape
        launched.append((fn_self, describe_args(args), describe_kwargs(kwargs)))

    JITFunction.run = record
    for k, text in enumerate(sys.argv[2:]):
        genes = json.loads(text)
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as source:
            source.write(writer.render(op.spec, genes))
        spec = importlib.util.spec_from_file_location(f"variant_{k}", source.name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with torch.device("meta"):
            model = module.ModelNew(*op.init_inputs()).eval()
            inputs = [torch.empty_like(x, device="meta") if isinstance(x, torch.Tensor) else x for x in op.inputs()]
        launched.clear()
        with torch.no_grad():
            model(*inputs)
        for fn, args, kwargs in launched:
            started = time.monotonic()
            facts = compile_facts(fn, args, kwargs)
            print(
                f"{text} {facts['name']}: compiled in {time.monotonic() - started:.1f} s, "
                f"{facts.get('registers')} registers, {facts.get('spills')} bytes spilled",
                flush=True,
            )


if __name__ == "__main__":
    main()
