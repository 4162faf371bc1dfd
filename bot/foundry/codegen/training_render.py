"""TrainingAnalysis + genes → one self-contained candidate module for a training operator:

module docstring   what it implements, that it runs forward and backward in Triton, what it saves for the
                   backward and what the backward recomputes, that double backward is refused, the genes
host helpers       as render.py
forward kernels    `_<op>_fwd_kernel` + launcher `<op>_forward`, as render.py writes them
backward kernels   `_<op>_bwd_<kind><i>_kernel` + launcher `<op>_bwd_<kind><i>`: the gradient graph's kernels
<Op>Function       the torch.autograd.Function: forward launches the forward kernels and saves the inputs,
                   the parameters and (gene train.save=forward) the forward's statistics; backward launches
                   the backward kernels, and raises under create_graph=True (no double backward; the static
                   guard's allowlist has no torch.autograd.function.once_differentiable)
ModelNew           the operator's constructor and state; forward goes through the Function where autograd
                   records the call, else straight to the forward launchers
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from foundry.codegen.describe import title
from foundry.codegen.expr import jit_helpers
from foundry.codegen.ir import UnsupportedError
from foundry.codegen.kernels import Emitted, host_helpers
from foundry.codegen.render import Renderer, param_ref
from foundry.codegen.source import Source, formatted, with_docstring
from foundry.codegen.training import SAVE_MODES, Half, TrainingAnalysis, ancestors

DOUBLE_BACKWARD = "double backward is not supported: Kernel Foundry generated and verified the first backward only"


def backward_names(e: Emitted) -> Emitted:
    """A backward segment's kernels and launcher named for the backward: `_<prefix>_fwd_kernel` → `_<prefix>_kernel`
    (the kernel of the gradient graph), launcher `<prefix>_forward` → `<prefix>`. Only whole identifiers change."""
    renames = {k: re.sub(r"_fwd_kernel$", "_kernel", k) for k in e.kernels}
    renames[e.name] = e.name.removesuffix("_forward")

    def apply(text: str) -> str:
        for old, new in renames.items():
            text = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, text)
        return text

    return replace(e, kernel=apply(e.kernel), launcher=apply(e.launcher), name=renames[e.name],
                   kernels=[renames[k] for k in e.kernels])  # fmt: skip


class TrainingRenderer:
    def __init__(self, analysis: TrainingAnalysis, genes: dict[str, Any]) -> None:
        self.analysis = analysis
        self.save = str(genes.get("train.save", SAVE_MODES[0]))
        self.half: Half = analysis.modes.get(self.save) or analysis.main
        self.genes = genes
        self.fwd = Renderer(self.half.forward, genes)
        self.bwd = Renderer(self.half.backward, genes)
        self.split = self.half.split
        self.a = self.half.forward
        self.applied: set[str] = set()

    # -- names -------------------------------------------------------------------------------------

    def function_name(self) -> str:
        words = re.split(r"[^0-9a-zA-Z]+", self.a.name)
        return "".join(w[:1].upper() + w[1:] for w in words if w) + "Function"

    def params(self) -> list[tuple[str, str]]:
        """(node name, state key) of the parameters (not buffers) either half reads, in state order."""
        found = []
        for key, (_, _, is_buffer) in self.a.params.items():
            if is_buffer:
                continue
            for graph in (self.half.forward.graph, self.half.backward.graph):
                leaf = next((n for n, k in graph.params.items() if k == key), None)
                if leaf is not None:
                    found.append((leaf, key))
                    break
        return found

    # -- the module --------------------------------------------------------------------------------

    def render(self) -> str:
        fwd = self.fwd.emit()
        bwd = [backward_names(e) for e in self.bwd.emit()]
        self.applied = self.fwd.applied | self.bwd.applied
        if len({tuple(h.split.saved) for h in self.analysis.modes.values()}) > 1:
            self.applied.add("train.save")  # else every save mode saves the same: the gene changes nothing here
        body = host_helpers([e.launcher for e in fwd + bwd])
        body += jit_helpers([e.kernel for e in fwd + bwd])
        for i, e in enumerate(fwd):
            body += [self.fwd.kernels_with_docs(i, e), with_docstring(e.launcher, self.fwd.launcher_doc(i, e))]
        for i, e in enumerate(bwd):
            doc = self.bwd.launcher_doc(i, e).replace("Launch ", "Launch the backward's ", 1)
            body += [self.bwd.kernels_with_docs(i, e), with_docstring(e.launcher, doc)]
        body.append(self.function())
        body.append(self.model(fwd, bwd))
        uses_math = any(re.search(r"(?<![\w.])math\.", part) for part in body)
        imports = ("import math\n\n" if uses_math else "") + "import torch\nimport triton\nimport triton.language as tl"
        imports = self.fwd.with_init_imports(imports + "\nfrom torch import nn")
        return formatted("\n\n\n".join([self.header(fwd, bwd), imports, *body]) + "\n")

    def operator_ops(self) -> list[str]:
        """The aten ops the operator's outputs are computed with (not those of values kept only for the backward)."""
        graph = self.a.graph
        needed = ancestors(graph, graph.outputs[: self.split.outputs], set())
        return list(dict.fromkeys(graph.origin[n] for n in graph.nodes if n in needed and n in graph.origin))

    def title(self) -> str:
        return title(self.operator_ops())

    def dtype(self) -> str:
        graph = self.a.graph
        return ",".join(sorted({str(graph.nodes[o].dtype) for o in graph.outputs[: self.split.outputs]}))

    def header(self, fwd: list[Emitted], bwd: list[Emitted]) -> str:
        doc = Source()
        title = self.title()
        doc.line(
            f"{title} in Triton, forward and backward: a Kernel Foundry kernel for {self.a.path}::{self.a.class_name}."
        )
        doc.line("")
        doc.line(
            f"Forward: fuses {', '.join(self.operator_ops()) or 'the forward'} into {len(fwd)} launcher(s) "
            f"({', '.join(e.name for e in fwd)}). Backward: the gradients of {self.grads_text()} from the upstream "
            f"gradient{'s' if len(self.split.tangents) > 1 else ''} ({', '.join(self.split.tangents)}) in "
            f"{len(bwd)} launcher(s) ({', '.join(e.name for e in bwd)}), also Triton kernels."
        )
        doc.line(f"Saved for the backward: {self.saved_text()}.")
        doc.line(
            f"Computes in fp32 and stores {self.dtype()} (precision class {self.a.precision}). `ModelNew` keeps the "
            "operator's constructor, parameters and buffers, so its state_dict loads as is."
        )
        doc.line(
            "Double backward is not supported: a backward asked to build its own graph (create_graph=True) raises."
        )
        doc.line("")
        doc.line(
            "Written by the template writer; its forward and its gradients (of the inputs and the parameters, from "
            "random upstream gradients) verified against the operator's autograd and timed by the Foundry evaluator "
            "(the pull request's report says on which GPU and how)."
        )
        genes = ", ".join(f"{k}={v}" for k, v in sorted(self.genes.items()) if k in self.applied)
        if genes:
            doc.line(f"Launch settings (the search's genes): {genes}.")
        out = Source()
        out.docstring(doc.text())
        return out.text()

    def grads_text(self) -> str:
        return ", ".join(t.label for t in self.split.targets if t.grad is not None) or "nothing"

    def saved_text(self) -> str:
        kept = [*self.forward_args(), *(n for n, _ in self.params())]
        text = ", ".join(kept)
        if self.split.saved:
            return f"{text} and the forward's {', '.join(self.split.saved)} (the rest is recomputed by the backward)"
        return f"{text} only (the backward recomputes every forward value it reads)"

    def forward_args(self) -> list[str]:
        return list(self.a.forward_args)

    def function(self) -> str:
        args = [*self.forward_args(), *(n for n, _ in self.params())]
        outs = self.a.graph.outputs
        n_out = self.split.outputs
        results = [self.fwd.var(o) for o in outs]
        kept = results[:n_out]
        saved = results[n_out:]
        out = Source()
        with out.block(f"class {self.function_name()}(torch.autograd.Function):"):
            out.docstring(
                f"{self.title()} with a Triton backward. forward saves {self.saved_text()}; backward returns "
                f"the gradients of {self.grads_text()}. A backward under create_graph=True (double backward) "
                "raises."
            )
            out.line("")
            out.line("@staticmethod")
            with out.block(f"def forward(ctx, module, {', '.join(args)}):"):
                out.line(f"{', '.join(results)} = module.launch_forward({', '.join(args)})")
                out.line("ctx.module = module  # its constructor's values (sizes, eps) size the backward's launches")
                out.line(f"ctx.save_for_backward({', '.join(args + saved)})")
                out.line(f"return {', '.join(kept)}")
            out.line("")
            out.line("@staticmethod")
            with out.block(f"def backward(ctx, {', '.join(self.split.tangents)}):"):
                with out.block(
                    "if torch.is_grad_enabled():  # create_graph=True: a graph of this backward is asked for"
                ):
                    out.line(f'raise RuntimeError("{DOUBLE_BACKWARD}")')
                out.line(f"{', '.join(args + saved)}{',' if len(args + saved) == 1 else ''} = ctx.saved_tensors")
                call = ", ".join(args + self.split.tangents + saved)
                out.line(f"return (None, *ctx.module.launch_backward({call}))")
        return out.text()

    def model(self, fwd: list[Emitted], bwd: list[Emitted]) -> str:
        args = self.forward_args()
        params = self.params()
        tensors = [*args, *(n for n, _ in params)]
        out = Source()
        with out.block("class ModelNew(nn.Module):"):
            out.docstring(
                f"{self.title()} in Triton: the constructor, parameters and buffers of {self.a.class_name}; "
                "forward and backward."
            )
            out.line("")
            init_sig = f"self, {self.a.init_params}" if self.a.init_params else "self"
            with out.block(f"def __init__({init_sig}):"):
                out.line("super().__init__()")
                stored = self.half.forward.stored_args + self.half.backward.stored_args
                out.extend(self.fwd.init_lines(sorted(set(stored), key=stored.index)))
            out.line("")
            with out.block(f"def forward(self, {', '.join(args)}):" if args else "def forward(self):"):
                for name, key in params:
                    out.line(f"{name} = {param_ref(key)}")
                needs = " or ".join(f"{t}.requires_grad" for t in tensors if self.is_floating(t))
                with out.block(f"if torch.is_grad_enabled() and ({needs}):"):
                    out.line(f"return {self.function_name()}.apply(self, {', '.join(tensors)})")
                call = f"self.launch_forward({', '.join(tensors)})"
                n_out = self.split.outputs
                if len(self.a.graph.outputs) == n_out:
                    out.line(f"return {call}")
                elif n_out == 1:
                    out.line(f"return {call}[0]  # the saved statistics are not needed without autograd")
                else:
                    out.line(f"return {call}[:{n_out}]  # the saved statistics are not needed without autograd")
            out.line("")
            self.launch_method(out, "launch_forward", self.fwd, fwd, tensors, None)
            out.line("")
            grads = self.grad_returns()
            self.launch_method(
                out, "launch_backward", self.bwd, bwd, [*tensors, *self.split.tangents, *self.split.saved], grads
            )
        return out.text()

    def is_floating(self, name: str) -> bool:
        node = self.a.graph.nodes.get(name)
        if node is None:
            return True
        return node.dtype.is_floating_point

    def grad_returns(self) -> list[str]:
        """The backward's result per argument of the Function after the module: a gradient or None."""
        by_leaf = {t.leaf: t for t in self.split.targets}
        by_label = {t.label: t for t in self.split.targets}
        found = []
        for name in self.forward_args():
            t = by_label.get(name)
            found.append(self.bwd.var(t.grad) if t is not None and t.grad is not None else "None")
        for name, _ in self.params():
            t = by_leaf.get(name)
            found.append(self.bwd.var(t.grad) if t is not None and t.grad is not None else "None")
        return found

    def launch_method(
        self, out: Source, name: str, r: Renderer, emitted: list[Emitted], params: list[str], grads: list[str] | None
    ) -> None:
        lines, _ = r.launch_lines(emitted)
        if grads is not None:
            lines[-1] = f"return {', '.join(grads)}" if len(grads) > 1 else f"return ({grads[0]},)"
        text = "\n".join(lines)
        buffers = [
            (n, param_ref(node.attrs["key"]))
            for n, node in r.nodes.items()
            if node.op == "param"
            and self.a.params[node.attrs["key"]][2]
            and re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text)
        ]
        with out.block(f"def {name}(self, {', '.join(params)}):"):
            if grads is None:
                out.docstring("The forward's launchers in order (host views between them run in PyTorch).")
            else:
                out.docstring(
                    "The backward's launchers in order; returns the gradients of the arguments after the module "
                    "(None where there is none)."
                )
            for n, ref in buffers:
                out.line(f"{n} = {ref}")
            out.extend(lines)


def render_training(analysis: TrainingAnalysis, genes: dict[str, Any]) -> tuple[str, frozenset[str]]:
    """The source, and the genes that shaped it (the emitters' of both halves, the plan's, train.save). Where the
    asked save mode's kernels have no template (cross-entropy's one-hot row with its statistics saved: no operand
    of the row's full shape is left), the other mode is rendered, and its header names the mode it runs."""
    asked = str(genes.get("train.save", SAVE_MODES[0]))
    modes = [asked, *(m for m in analysis.modes if m != asked)]
    refused: UnsupportedError | None = None
    for mode in modes:
        if mode not in analysis.modes:
            continue
        renderer = TrainingRenderer(analysis, {**genes, "train.save": mode} if "train.save" in genes else genes)
        try:
            source = renderer.render()
        except UnsupportedError as exc:
            refused = refused or exc
            continue
        return source, frozenset(renderer.applied)
    assert refused is not None
    raise refused
