"""Analysis + genes → one self-contained candidate module, laid out like a hand-written kernel file:

    module docstring   what it implements (operator, repository-relative path), the ops it fuses, what it
                       assumes, that it is forward-only, the genes that shaped it (each once)
    host helpers       plain-Python launch arithmetic (cdiv, next_power_of_2, broadcast_shape)
    per kernel         `_<op>_fwd_kernel` (@triton.jit, with a docstring: its formula and the aten ops it
                       fuses), then its launcher `<op>_forward` (shapes, grid, block sizes; its assumptions)
    ForwardOnly        the autograd.Function a call that needs gradients goes through: its backward raises
    ModelNew           the operator's constructor, parameters and buffers; forward calls the launchers (and,
                       under the hybrid policy, the library calls kept between them, listed in the docstring)

The text goes through `ruff format` where ruff is installed (source.formatted).
"""

from __future__ import annotations

import math
import re
from typing import Any

import torch

from foundry.codegen.analyze import Analysis
from foundry.codegen.describe import KIND_WORDS, Formula, aten_ops, title
from foundry.codegen.expr import jit_helpers
from foundry.codegen.kernels import Emitted, emit_segment, host_helpers
from foundry.codegen.source import Source, formatted, with_docstring

FORWARD_ONLY = (
    "this kernel is forward-only: Kernel Foundry verified its forward, not a backward. Run it under "
    "torch.no_grad() / torch.inference_mode(), or declare training to get a backward"
)
# genes the renderer passes to the emitters (not search genes: never listed as genes)
INTERNAL = frozenset({"others", "row_lengths"})
ROLES = (
    ("_sort_kernel", "one program per block of rows along the dim: packed (value, index) keys ordered in registers"),
    ("_sort_keys", "packed int64 keys: the value's bits as an ordered integer, then the index (ties: lowest first)"),
    ("_sort_unpack", "the values and indices of packed keys (_sort_keys)"),
    ("_sort_rows", "a bitonic sort of each row (the last axis), largest first: partners by a reshape and a sum"),
    ("_combine", "cummax / cummin's step over (value, index) pairs: the later where it is NaN or not past the earlier"),
    ("_logaddexp", "log(exp(a) + exp(b)), logcumsumexp's combine in tl.associative_scan and across tiles"),
    ("_scatter_kernel", "one source element per lane, added into the output at its index with tl.atomic_add"),
    ("_gather_kernel", "one output element per lane, the source read at the index tensor's positions"),
    ("_scan_kernel", "one program per block of rows along the scanned dim, tiles of BLOCK_N with a running carry"),
    ("_split_partial_kernel", "split rows, pass 1: each program reduces one chunk of a row to partial statistics"),
    ("_split_fwd_kernel", "split rows, pass 2: each program merges its row's partials and writes its chunk"),
    ("_split_one_kernel", "split rows in one launch: the last program of a row to arrive merges the partials"),
    ("_loop_fwd_kernel", "rows longer than one tile: passes over column tiles of BLOCK_N"),
    ("_rows_fwd_kernel", "one program per (row of the leading dims, block of the last dims)"),
    ("_col_partial_kernel", "pass 1: each program reduces one chunk of the reduced rows of its strip to partials"),
    ("_col_combine_kernel", "pass 2: one program per strip merges its partials in order and runs the epilogue"),
    ("_partial_kernel", "pass 1: each program reduces a strided share of the elements to partials"),
    ("_combine_kernel", "pass 2: one program combines the partials and runs the epilogue"),
    (
        "_gemm_fwd_kernel",
        "implicit GEMM: output positions x output channels per program, tl.dot over in-channels x taps",
    ),
    ("_direct_fwd_kernel", "direct convolution: a loop over in-channels and taps"),
    ("_plane_fwd_kernel", "one channel per program over 2-d spatial tiles (depthwise and narrow groups)"),
    ("_epilogue_fwd_kernel", "the epilogue over the finished convolution"),
)


def dtype_name(dtype: torch.dtype) -> str:
    return f"torch.{str(dtype).removeprefix('torch.')}"


class Recorded(dict):  # type: ignore[type-arg]
    """A kind's genes, recording which ones the emitter reads (those are the ones that apply)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)


class Renderer:
    def __init__(self, analysis: Analysis, genes: dict[str, Any]) -> None:
        self.a = analysis
        self.genes = genes
        self.graph = analysis.graph
        self.nodes = analysis.graph.nodes
        self.applied: set[str] = set()

    def prefix(self, i: int) -> str:
        if len(self.a.segments) == 1:
            return self.a.name
        return f"{self.a.name}_{self.a.segments[i].kind}{i}"

    def genes_for(self, kind: str) -> Recorded:
        """Genes are namespaced by kernel kind (row.BLOCK_M, matmul.BLOCK_K, …)."""
        out = Recorded()
        for key, value in self.genes.items():
            scope, _, gene = key.partition(".")
            if scope == kind:
                dict.__setitem__(out, gene, value)
        return out

    def named_consts(self) -> set[str]:
        """Constants passed to the kernels as named parameters (eps), and those that follow the sizes."""
        named = {n for n, node in self.nodes.items() if node.op == "const" and node.attrs.get("named")}
        return set(self.a.const_exprs) | named

    def row_lengths(self, i: int) -> tuple[int, ...]:
        seg = self.a.segments[i]
        shapes = self.a.capture_shapes.get(seg.base_of, ())
        k = len(seg.dims)
        return tuple(sorted({math.prod(s[len(s) - k :]) for s in shapes}))

    def emit(self) -> list[Emitted]:
        """Each segment's kernels and launcher, in launch order (recording the genes they read)."""
        emitted: list[Emitted] = []
        symbolic = self.named_consts()
        for i, seg in enumerate(self.a.segments):
            genes = self.genes_for(seg.kind)
            if seg.kind == "conv":
                dict.__setitem__(genes, "others", len(self.a.segments) > 1)  # a library conv may need no kernel
            if seg.kind == "row":
                dict.__setitem__(genes, "row_lengths", self.row_lengths(i))
            emitted.append(emit_segment(self.graph, seg, genes, self.prefix(i), symbolic))
            self.applied |= {f"{seg.kind}.{g}" for g in genes.read if g not in INTERNAL}
        self.applied |= {k for k in self.genes if k.startswith("plan.")}
        return emitted

    def render(self) -> str:
        emitted = self.emit()
        body = host_helpers([e.launcher for e in emitted])
        body += jit_helpers([e.kernel for e in emitted])
        for i, e in enumerate(emitted):
            body += [self.kernels_with_docs(i, e), with_docstring(e.launcher, self.launcher_doc(i, e))]
        body.append(self.forward_only())
        body.append(self.model(emitted))
        uses_math = any(re.search(r"(?<![\w.])math\.", part) for part in body)
        imports = ("import math\n\n" if uses_math else "") + "import torch\nimport triton\nimport triton.language as tl"
        parts = [self.header(emitted), self.with_init_imports(imports + "\nfrom torch import nn"), *body]
        return formatted("\n\n\n".join(parts) + "\n")

    # -- documentation -------------------------------------------------------------------------------

    def title(self) -> str:
        return title(self.fused())

    def fused(self) -> list[str]:
        found: list[str] = []
        for seg in self.a.segments:
            found += [op for op in aten_ops(self.graph, seg) if op not in found]
        return found

    def header(self, emitted: list[Emitted]) -> str:
        doc = Source()
        kernels = sum(len(e.kernels) for e in emitted)
        launches = ", ".join(e.name for e in emitted)
        doc.line(f"{self.title()} in Triton: a Kernel Foundry kernel for {self.a.path}::{self.a.class_name}.")
        doc.line("")
        doc.line(
            f"Fuses {', '.join(self.fused()) or 'the forward'} into {len(emitted)} launcher(s) ({launches}) over "
            f"{kernels} Triton kernel(s)."
        )
        doc.line(
            f"Computes in fp32 and stores {self.a.dtype} (precision class {self.a.precision}). `ModelNew` keeps the "
            "operator's constructor, parameters and buffers, so its state_dict loads as is."
        )
        doc.line("")
        doc.line(
            "Forward only: no backward was generated or verified. A call where gradients are required goes through "
            "ForwardOnly, whose backward raises instead of returning no gradient."
        )
        doc.line("")
        doc.line(
            "Written by the template writer; verified against the operator and timed by the Foundry evaluator "
            "(the pull request's report says on which GPU and how)."
        )
        kept = self.library_ops()
        if kept:
            doc.line("")
            doc.line(
                f"Library ops kept (hybrid policy): {', '.join(kept)} run in PyTorch between the Triton launches "
                "(no template expresses them); every other op runs in the Triton kernels."
            )
        genes = ", ".join(f"{k}={v}" for k, v in sorted(self.genes.items()) if k in self.applied)
        if genes:
            doc.line(f"Launch settings (the search's genes): {genes}.")
        out = Source()
        out.docstring(doc.text())
        return out.text()

    def kernels_with_docs(self, i: int, e: Emitted) -> str:
        seg = self.a.segments[i]
        formula = Formula(self.graph, seg, self.named_consts())
        chunks = e.kernel.split("\n\n\n")
        out: list[str] = []
        first = ""
        for chunk in chunks:
            match = re.search(r"def (\w+)\(", chunk)
            if match is None:
                out.append(chunk)
                continue
            name = match.group(1)
            role = next((text for suffix, text in ROLES if name.endswith(suffix)), "")
            role = role or KIND_WORDS.get(seg.kind, seg.kind)
            lines = [f"{title(aten_ops(self.graph, seg))}: {role}."]
            if not first:
                first = name
                ops = aten_ops(self.graph, seg)
                lines += ["", f"Fuses {', '.join(ops)}." if ops else "Fuses the forward's ops shown below."]
                reduced = formula.reduced()
                lines += [f"Computes ({reduced}):" if reduced else "Computes:"]
                lines += ["    " + line for line in formula.lines()]
            else:
                lines += ["", f"Same math as {first}."]
            out.append(with_docstring(chunk, "\n".join(lines)))
        return "\n\n\n".join(out)

    def launcher_doc(self, i: int, e: Emitted) -> str:
        seg = self.a.segments[i]
        outs = ", ".join(e.outputs)
        lines = [f"Launch {KIND_WORDS.get(seg.kind, seg.kind)}; returns {outs}.", ""]
        tensors = ", ".join(f"{t} ({len(self.nodes[t].shape)}-d {self.nodes[t].dtype})" for t in e.tensors)
        lines.append(
            f"Assumes: {tensors or 'no tensor operands'} on one device; non-contiguous operands are copied "
            "contiguous here; outputs are new contiguous tensors."
        )
        if e.scalars:
            lines.append(f"Named parameters: {', '.join(e.scalars)}.")
        if seg.kind == "row":
            lengths = self.row_lengths(i)
            if lengths:
                lines.append(
                    f"Verified on rows of {', '.join(map(str, lengths))} elements (the operator's declared shapes)."
                )
        return "\n".join(lines)

    # -- the module ----------------------------------------------------------------------------------

    def forward_only(self) -> str:
        out = Source()
        with out.block("class ForwardOnly(torch.autograd.Function):"):
            out.docstring(
                "Runs the Triton forward where autograd records the call: its outputs require grad like the\n"
                "operator's, and a backward through them raises rather than silently giving no gradient."
            )
            out.line("")
            out.line("@staticmethod")
            with out.block("def forward(ctx, launch, *args):"):
                out.line("return launch(*args)")
            out.line("")
            out.line("@staticmethod")
            with out.block("def backward(ctx, *grads):"):
                with out.block("raise RuntimeError("):
                    out.line(f'"{FORWARD_ONLY[:100]}"')
                    out.line(f'"{FORWARD_ONLY[100:]}"')
                out.line(")")
        return out.text()

    def model(self, emitted: list[Emitted]) -> str:
        out = Source()
        with out.block("class ModelNew(nn.Module):"):
            out.docstring(
                f"{self.title()} in Triton: the constructor, parameters and buffers of {self.a.class_name}; "
                "forward only."
            )
            out.line("")
            init_sig = f"self, {self.a.init_params}" if self.a.init_params else "self"
            with out.block(f"def __init__({init_sig}):"):
                out.line("super().__init__()")
                out.extend(self.init_lines(self.a.stored_args))
            out.line("")
            self.forward(out, emitted)
        return out.text()

    def params_used(self, lines: list[str]) -> list[str]:
        """Parameters (not buffers) the forward reads, in the order of the state_dict."""
        text = "\n".join(lines)
        return [
            name
            for name, node in self.nodes.items()
            if node.op == "param"
            and not self.a.params[node.attrs["key"]][2]
            and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text)
        ]

    def forward(self, out: Source, emitted: list[Emitted]) -> None:
        args = list(self.a.forward_args)
        body, single = self.launch_lines(emitted)
        bound = [(n, param_ref(node.attrs["key"])) for n, node in self.nodes.items() if node.op == "param"]
        text = "\n".join(body)
        bound = [(n, ref) for n, ref in bound if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text)]
        trainable = self.params_used(body)
        watched = args + trainable
        with out.block(f"def forward(self, {', '.join(args)}):" if args else "def forward(self):"):
            for name, ref in bound:
                out.line(f"{name} = {ref}")
            needs = " or ".join(f"{t}.requires_grad" for t in watched)
            if single is not None:
                launcher, call_args, keywords = single
                positional = call_args + [v for _, v in keywords]
                if needs:
                    with out.block(f"if torch.is_grad_enabled() and ({needs}):"):
                        out.line(f"return ForwardOnly.apply({launcher}, {', '.join(positional)})")
                named = call_args + [f"{k}={v}" for k, v in keywords]
                out.line(f"return {launcher}({', '.join(named)})")
                return
            tensors = args + [n for n, _ in bound]
            if needs:
                with out.block(f"if torch.is_grad_enabled() and ({needs}):"):
                    out.line(f"return ForwardOnly.apply(self.launch, {', '.join(tensors)})")
            out.line(f"return self.launch({', '.join(tensors)})")
        out.line("")
        with out.block(f"def launch(self, {', '.join(tensors)}):"):
            between = "host views and library ops" if self.library_ops() else "host views"
            out.docstring(f"The forward's launchers in order ({between} between them run in PyTorch).")
            out.extend(body)

    def launch_lines(
        self, emitted: list[Emitted]
    ) -> tuple[list[str], tuple[str, list[str], list[tuple[str, str]]] | None]:
        """The forward's statements over local names (parameters bound by name), and, when they are one launch
        whose outputs are the results, that launch as (launcher, positional args, keyword args)."""
        lines: list[str] = []
        calls: list[tuple[str, list[str], list[tuple[str, str]], list[str]]] = []
        last = {seg.nodes[-1]: i for i, seg in enumerate(self.a.segments)}
        aliases = {seg.alias for seg in self.a.segments if seg.alias}
        views = 0
        for name, node in self.nodes.items():
            if node.op == "hostview" and name not in aliases:
                expr = self.a.view_exprs[name]
                like = node.attrs["params"][0] if node.attrs["view"] == "like" else None
                lines.append(
                    f"{name} = " + expr.format(src=self.var(node.args[0]), like=self.var(like) if like else "")
                )
                views += 1
            if node.op == "library" and name in self.a.library_exprs:
                lines.append(self.library_line(name))
                views += 1
            if name in last:
                e = emitted[last[name]]
                args = [self.var(t) for t in e.tensors]
                keywords = [(s, self.var(s)) for s in e.scalars]
                outs = e.outputs[0] if len(e.outputs) == 1 else ", ".join(e.outputs)
                lines.append(f"{outs} = {e.name}({', '.join(args + [f'{k}={v}' for k, v in keywords])})")
                calls.append((e.name, args, keywords, list(e.outputs)))
                for out, alias in e.reshaped.items():
                    lines.append(f"{out} = " + self.a.view_exprs[alias].format(src=out, like=""))
                    views += 1
        results = [self.var(o) for o in self.graph.outputs]
        lines.append(f"return {', '.join(results)}")
        if len(calls) == 1 and views == 0 and calls[0][3] == results:
            name, args, keywords, _ = calls[0]
            return lines, (name, args, keywords)
        return lines, None

    def library_line(self, name: str) -> str:
        """The statement of a library call (hybrid policy) kept between the launches: its results (several where
        the op returns a tuple: all of them, used or not, so that the op runs once) = the call."""
        node = self.nodes[name]
        group = [
            n
            for n, other in self.nodes.items()
            if other.op == "library" and other.attrs["group"] == node.attrs["group"]
        ]
        group.sort(key=lambda n: self.nodes[n].attrs["index"] or 0)
        operands = [self.var(t) for t in node.args]
        tensors = operands or [self.var(n) for n in self.graph.inputs]
        device = f"{tensors[0]}.device" if tensors else "None"
        call = self.a.library_exprs[name].format(*operands, device=device)
        return f"{', '.join(group)} = {call}  # library op {node.attrs['target']} (hybrid policy)"

    def library_ops(self) -> list[str]:
        return self.a.library_ops()

    def var(self, name: str) -> str:
        """The forward's expression for a value: inputs by their argument names, parameters by their names
        (bound at the top of forward), constants by value."""
        node = self.nodes[name]
        if node.op == "input":
            return self.a.forward_args[node.attrs["index"]]
        if node.op == "const":
            return self.a.const_exprs.get(name, repr(node.attrs["value"]))
        return name

    def init_lines(self, stored: list[str]) -> list[str]:
        """The constructor's body after super().__init__(): the reference's own statements where they stand alone
        (analyze.init_body: its parameters and buffers made and initialised as the reference makes them), else
        empty parameters and buffers of the reference's shapes (a state to load); then the constructor arguments
        the forward reads."""
        made = list(self.a.init_source[1]) if self.a.init_source is not None else self.state_lines()
        return made + [f"self.{arg} = {arg}" for arg in stored]

    def with_init_imports(self, imports: str) -> str:
        """`imports` and those of the operator file that the reference constructor's statements use."""
        have = set(imports.split("\n"))
        extra = [line for line in (self.a.init_source[0] if self.a.init_source else []) if line not in have]
        return "\n".join([imports, *extra])

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


def param_ref(key: str) -> str:
    out = "self"
    for part in key.split("."):
        out += f"[{part}]" if part.isdigit() else f".{part}"
    return out


def render(analysis: Analysis, genes: dict[str, Any]) -> str:
    return Renderer(analysis, genes).render()


def render_applied(analysis: Analysis, genes: dict[str, Any]) -> tuple[str, frozenset[str]]:
    """The source, and the genes that shaped it (those the emitters read, and the plan's): the ones the module
    docstring lists. A gene outside them changes nothing in this source."""
    renderer = Renderer(analysis, genes)
    source = renderer.render()
    return source, frozenset(renderer.applied)
