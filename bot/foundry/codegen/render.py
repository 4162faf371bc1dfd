"""Analysis + genes → one self-contained candidate module: header, kernels, launchers, ModelNew."""

from __future__ import annotations

import re
from typing import Any

import torch

from foundry.codegen.analyze import Analysis
from foundry.codegen.kernels import Emitted, emit_segment, host_helpers


def dtype_name(dtype: torch.dtype) -> str:
    return f"torch.{str(dtype).removeprefix('torch.')}"


class Renderer:
    def __init__(self, analysis: Analysis, genes: dict[str, Any]) -> None:
        self.a = analysis
        self.genes = genes
        self.graph = analysis.graph
        self.nodes = analysis.graph.nodes

    def prefix(self, i: int) -> str:
        if len(self.a.segments) == 1:
            return self.a.name
        return f"{self.a.name}_{self.a.segments[i].kind}{i}"

    def genes_for(self, kind: str) -> dict[str, Any]:
        """Genes are namespaced by kernel kind (row.BLOCK_M, matmul.BLOCK_K, …)."""
        out = {}
        for key, value in self.genes.items():
            scope, _, gene = key.partition(".")
            if scope == kind:
                out[gene] = value
        return out

    def var(self, name: str, launch: bool = False) -> str:
        """The forward's expression for a value; launch=True when it is handed to a launcher (kernels get
        plain tensors: .detach() of a Parameter is a plain view of the same memory)."""
        node = self.nodes[name]
        if node.op == "input":
            return self.a.forward_args[node.attrs["index"]]
        if node.op == "param":
            return param_ref(node.attrs["key"]) + (".detach()" if launch else "")
        if node.op == "const":
            return self.a.const_exprs.get(name, repr(node.attrs["value"]))
        return name

    def render(self) -> str:
        emitted: list[Emitted] = []
        symbolic = set(self.a.const_exprs)
        for i, seg in enumerate(self.a.segments):
            genes = self.genes_for(seg.kind)
            if seg.kind == "conv":
                genes["others"] = len(self.a.segments) > 1  # other kernels launch: a library conv may need none
            emitted.append(emit_segment(self.graph, seg, genes, self.prefix(i), symbolic))
        body = host_helpers([e.launcher for e in emitted])
        for e in emitted:
            body += [e.kernel, e.launcher]
        body.append(self.model(emitted))
        uses_math = any(re.search(r"(?<![\w.])math\.", part) for part in body)
        imports = ("import math\n\n" if uses_math else "") + "import torch\nimport triton\nimport triton.language as tl"
        parts = [self.header(), imports + "\nfrom torch import nn", *body]
        return "\n\n\n".join(parts) + "\n"

    def header(self) -> str:
        genes = ", ".join(f"{k}={v}" for k, v in sorted(self.genes.items()))
        lines = [
            f"# Kernel Foundry candidate for {self.a.path}::{self.a.class_name}",
            f"# Implements the operator's forward in Triton ({self.a.summary()}); output dtype {self.a.dtype},",
            f"# precision class {self.a.precision}. Written by the template writer; verified and timed by the",
            "# Foundry evaluator (the report says on which GPU and how).",
            f"# genes: {genes}",
        ]
        return "\n".join(lines)

    def model(self, emitted: list[Emitted]) -> str:
        init_sig = f"self, {self.a.init_params}" if self.a.init_params else "self"
        init = [f"def __init__({init_sig}):", "    super().__init__()"]
        for arg in self.a.stored_args:
            init.append(f"    self.{arg} = {arg}")
        init += ["    " + line for line in self.state_lines()]
        fwd = [f"def forward(self, {', '.join(self.a.forward_args)}):" if self.a.forward_args else "def forward(self):"]
        fwd += ["    " + line for line in self.forward_lines(emitted)]
        doc = (
            f'    """Triton version of {self.a.class_name}: same constructor, parameters and buffers; '
            f'{self.a.summary()}."""'
        )
        body = [doc, ""] + ["    " + x if x else x for x in init] + [""] + ["    " + x if x else x for x in fwd]
        return "class ModelNew(nn.Module):\n" + "\n".join(body)

    def state_lines(self) -> list[str]:
        lines: list[str] = []
        made: set[str] = set()
        tree: dict[str, set[str]] = {}
        for key in self.a.params:
            parts = key.split(".")
            for i in range(1, len(parts)):
                tree.setdefault(".".join(parts[:i]), set()).add(parts[i])
        for key, (shape, dtype, is_buffer) in self.a.params.items():
            parts = key.split(".")
            for i in range(1, len(parts)):
                holder = ".".join(parts[:i])
                if holder in made:
                    continue
                made.add(holder)
                children = tree[holder]
                if all(c.isdigit() for c in children):
                    n = max(int(c) for c in children) + 1
                    lines.append(f"{param_ref(holder)} = nn.ModuleList([nn.Module() for _ in range({n})])")
                else:
                    lines.append(f"{param_ref(holder)} = nn.Module()")
            owner = param_ref(".".join(parts[:-1])) if len(parts) > 1 else "self"
            empty = f"torch.empty({', '.join(shape)}{', ' if shape else ''}dtype={dtype_name(dtype)})"
            if shape == []:
                empty = f"torch.empty((), dtype={dtype_name(dtype)})"
            if is_buffer:
                lines.append(f'{owner}.register_buffer("{parts[-1]}", {empty})')
            else:
                lines.append(f"{owner}.{parts[-1]} = nn.Parameter({empty})")
        return lines

    def forward_lines(self, emitted: list[Emitted]) -> list[str]:
        lines: list[str] = []
        last = {seg.nodes[-1]: i for i, seg in enumerate(self.a.segments)}
        aliases = {seg.alias for seg in self.a.segments if seg.alias}
        for name, node in self.nodes.items():
            if node.op == "hostview" and name not in aliases:
                expr = self.a.view_exprs[name]
                like = node.attrs["params"][0] if node.attrs["view"] == "like" else None
                lines.append(
                    f"{name} = " + expr.format(src=self.var(node.args[0]), like=self.var(like) if like else "")
                )
            if name in last:
                e = emitted[last[name]]
                args = [self.var(t, launch=True) for t in e.tensors] + [self.var(s) for s in e.scalars]
                outs = ", ".join(e.outputs) + ("," if len(e.outputs) == 1 else "")
                if len(e.outputs) == 1:
                    outs = e.outputs[0]
                lines.append(f"{outs} = {e.name}({', '.join(args)})")
                for out, alias in e.reshaped.items():
                    lines.append(f"{out} = " + self.a.view_exprs[alias].format(src=out, like=""))
        results = [self.var(o) for o in self.graph.outputs]
        lines.append(f"return {', '.join(results)}")
        return lines


def param_ref(key: str) -> str:
    out = "self"
    for part in key.split("."):
        out += f"[{part}]" if part.isdigit() else f".{part}"
    return out


def render(analysis: Analysis, genes: dict[str, Any]) -> str:
    return Renderer(analysis, genes).render()
