"""Values taken by an integer index tensor (index_select, embedding, x[idx], torch.gather), with the elementwise
ops after them, and values added at one (scatter_add, index_add).

A take node reads its source and index from memory; the kernel is a flat walk over the output (one element per
lane, as the pointwise kernel), where each take computes its element's address in the source. Its source is
viewed as (outer, N, inner) around the indexed dim (N its size there, inner the elements after it):

  rows   (index_select, embedding, aten.index): the output is (outer, K, inner) with K the index's elements; the
         lane at (o, k, i) reads src[o, index[k], i]
  along  (torch.gather): the output has the index's shape; the source is narrowed to it outside the dim (a
         view; torch.gather allows a smaller index there); the lane at (o, k, i) reads src[o, index[o, k, i], i]

Addresses are int64 (an index times the rows after it can pass 2**31). A negative index counts from the end
where torch allows it (aten.index: `wrap`); an index outside [0, N) (torch raises there) reads nothing: the load
is masked and gives 0, so no lane reads past the source. Other operands of the segment broadcast as in the
pointwise kernel; sources are loaded as fp32 (integers and bools as they are) and results cast when stored.

A scatter node (scatter_add, index_add) is the same addressing the other way: alone in its kernel, a lane per
source element (as far as the index reaches) adds its value into the output at the index with tl.atomic_add (fp32
only). The output is a new tensor of the filled base's value (zeros(S, C).scatter_add(...)) or a contiguous copy of
the base tensor; it is complete only when the kernel is, so nothing after it joins the kernel. Atomic adds make the
order of a sum free: rounding may differ from torch's in the last bits, within the fp32 tolerance.
"""

from __future__ import annotations

from typing import Any

from foundry.codegen.ir import Node
from foundry.codegen.kernels import Emitted, PointwiseEmitter, SegmentEmitter, indent


def address_lines(n: str, node: Node) -> list[str]:
    """Kernel lines of take or scatter node `n` at the lanes' flat positions `offs` (of the take's output, of the
    scatter's source): `{n}_idx`, the index there (negative ones counted from the end where the node wraps), and
    `{n}_take`, the int64 address in the indexed tensor, viewed as (outer, {n}_n, {n}_si) around the dim, of the
    index's {n}_count positions along it."""
    index = node.args[0] if node.op == "scatter" else node.args[1]
    block = f"({n}_count * {n}_si)"  # elements per outer position
    lines = [f"{n}_o = (offs // {block}).to(tl.int64)"]
    if node.attrs["form"] == "rows":
        lines += [
            f"{n}_rest = offs % {block}",
            f"{n}_idx = tl.load({index}_ptr + {n}_rest // {n}_si, mask=mask, other=0).to(tl.int64)",
        ]
        inner = f"{n}_rest % {n}_si"
    else:
        lines.append(f"{n}_idx = tl.load({index}_ptr + offs, mask=mask, other=0).to(tl.int64)")
        inner = f"offs % {n}_si"
    if node.attrs.get("wrap"):
        lines.append(f"{n}_idx = tl.where({n}_idx < 0, {n}_idx + {n}_n, {n}_idx)")
    lines.append(f"{n}_take = ({n}_o * {n}_n + {n}_idx) * {n}_si + {inner}")
    return lines


class GatherEmitter(PointwiseEmitter):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.takes = [n for n in self.seg.nodes if self.nodes[n].op == "take"]
        plain = {a for n in self.seg.nodes if self.nodes[n].op != "take" for a in self.nodes[n].args}
        # sources and indices only the takes read: addressed by the take's own lines, never loaded flat
        self.indexed = {t for t in self.tensors if t not in plain}

    def role(self, name: str) -> str:
        return "indexed" if name in self.indexed else super().role(name)

    def kernel_params(self) -> list[str]:
        return super().kernel_params() + [f"{n}_{size}" for n in self.takes for size in ("n", "count", "si")]

    def take_lines(self, n: str) -> list[str]:
        """The take's value per lane: its index read, the address in the source, the masked load."""
        src = self.nodes[n].args[0]
        load = f"tl.load({src}_ptr + {n}_take, mask=mask & ({n}_idx >= 0) & ({n}_idx < {n}_n), other=0)"
        return address_lines(n, self.nodes[n]) + [f"{n} = {self.load_cast(load, src)}"]

    def size_lines_of(self, n: str) -> list[str]:
        """Launcher lines: the take's N (the source's size along the dim), count (the index's elements, or its
        size along the dim) and si (the elements after the dim)."""
        node = self.nodes[n]
        src, index = node.args
        d = node.attrs["dim"]
        count = f"{index}.numel()" if node.attrs["form"] == "rows" else f"{index}.shape[{d}]"
        return [f"{n}_n = {src}.shape[{d}]", f"{n}_count = {count}", f"{n}_si = math.prod({src}.shape[{d + 1}:])"]

    def shape_expr(self, n: str) -> str:
        """The take's output shape at run time."""
        node = self.nodes[n]
        src, index = node.args
        if node.attrs["form"] == "along":
            return f"tuple({index}.shape)"
        d = node.attrs["dim"]
        taken = f"{index}.numel()" if node.attrs["flat"] else f"*{index}.shape"  # index_select: 0-d counts as 1-d
        parts = ([f"*{src}.shape[:{d}]"] if d else []) + [taken, f"*{src}.shape[{d + 1}:]"]
        return f"({', '.join(parts)})"

    def check_lines(self) -> list[str]:
        """Launcher lines refusing calls the lanes (which walk the first take's shape) would read past an operand
        in: takes of different shapes in one kernel, other operands that do not broadcast to it."""
        lines = []
        for n in self.takes[1:]:
            lines += [
                f"if {self.shape_expr(n)} != shape:",
                f'    raise ValueError("{n}: its shape differs from the kernel\'s other take")',
            ]
        plain = [f"{t}.shape" for t in self.tensors if t not in self.indexed]
        if plain:
            lines += [
                f"if broadcast_shape(shape, {', '.join(plain)}) != shape:",
                '    raise ValueError("operands that do not broadcast to the taken values\' shape")',
            ]
        return lines

    def narrow_lines(self) -> list[str]:
        """torch.gather's index may be smaller than its source outside the dim: the source narrowed to the index's
        sizes there (a view; narrow raises where the index is larger, as torch.gather does)."""
        lines = []
        for n in self.takes:
            node = self.nodes[n]
            src, index = node.args
            if node.attrs["form"] == "along":
                rank = len(self.nodes[src].shape)
                lines += [
                    f"{src} = {src}.narrow({k}, 0, {index}.shape[{k}])" for k in range(rank) if k != node.attrs["dim"]
                ]
        return lines

    def emit(self) -> Emitted:
        name = f"_{self.prefix}_gather_kernel"
        bcast = [t for t in self.tensors if self.role(t) == "bcast"]
        groups = self.groups() if bcast else []
        used = [g for g in range(len(groups)) if any(self.has_group(t, groups[g]) for t in bcast)]
        group_args = [f"size{g}" for g in used] + [f"inner{g}" for g in used]
        stride_args = [f"{t}_s{g}" for t in bcast for g in used if self.has_group(t, groups[g])]
        args = self.kernel_params() + ["numel"] + group_args + stride_args
        body = ["pid = tl.program_id(0)", "offs = pid * BLOCK + tl.arange(0, BLOCK)", "mask = offs < numel"]
        body += [f"coord{g} = (offs // inner{g}) % size{g}" for g in used]
        for t in self.tensors:
            role = self.role(t)
            if role == "full":
                body.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + offs, mask=mask, other=0.0)', t)}")
            elif role == "scalar":
                body.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr)', t)}")
            elif role == "bcast":
                index = " + ".join(f"coord{g} * {t}_s{g}" for g in used if self.has_group(t, groups[g]))
                body.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + {index}, mask=mask, other=0.0)', t)}")
        for n in self.seg.nodes:
            body += self.take_lines(n) if n in self.takes else [self.statement(n)]
        body += [f"tl.store({o}_ptr + offs, {self.store_value(o)}, mask=mask)" for o in self.seg.outputs]
        kernel = ["@triton.jit", f"def {name}({', '.join(args + ['BLOCK: tl.constexpr'])}):", *indent(body, 4)]

        lines = self.narrow_lines() + [f"{t} = {t}.contiguous()" for t in self.tensors]
        lines.append(f"shape = {self.shape_expr(self.takes[0])}")
        lines += self.check_lines()
        for n in self.takes:
            lines += self.size_lines_of(n)
        lines.append("numel = math.prod(shape)")
        lines.extend(self.size_lines("shape"))
        lines.extend(self.group_lines(used, groups, bcast))
        device = f"{self.nodes[self.takes[0]].args[0]}.device"
        lines += [f"{o} = torch.empty(shape, device={device}, dtype={self.dtype_expr(o)})" for o in self.seg.outputs]
        block = self.genes["BLOCK_SIZE"]
        call = ", ".join(a.removesuffix("_ptr") for a in args)
        lines.append("if numel > 0:")
        lines.append(f"    {name}[(cdiv(numel, {block}),)]({call}, BLOCK={block}, {self.launch_opts()})")
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        return Emitted(
            "\n".join(kernel),
            "\n".join(launcher),
            self.launcher,
            self.tensors,
            self.scalars,
            self.seg.outputs,
            [name],
        )


class ScatterEmitter(SegmentEmitter):
    """One scatter node alone: a lane per source element (of the index's extent) adds its value into the output
    at the index with tl.atomic_add (an index outside [0, N) adds nothing). The output is a new tensor filled with
    the base's value, or a contiguous copy of the base tensor."""

    def emit(self) -> Emitted:
        [n] = self.seg.nodes
        node = self.nodes[n]
        index, src, base = node.args[:3]
        d, along = node.attrs["dim"], node.attrs["form"] == "along"
        name = f"_{self.prefix}_scatter_kernel"
        args = [f"{index}_ptr", f"{src}_ptr", f"{n}_ptr", f"{n}_n", f"{n}_count", f"{n}_si", "numel"]
        body = ["pid = tl.program_id(0)", "offs = pid * BLOCK + tl.arange(0, BLOCK)", "mask = offs < numel"]
        body += address_lines(n, node)
        body += [
            f"{n}_val = tl.load({src}_ptr + offs, mask=mask, other=0).to({n}_ptr.dtype.element_ty)",
            f"tl.atomic_add({n}_ptr + {n}_take, {n}_val, mask=mask & ({n}_idx >= 0) & ({n}_idx < {n}_n))",
        ]
        kernel = ["@triton.jit", f"def {name}({', '.join(args + ['BLOCK: tl.constexpr'])}):", *indent(body, 4)]

        rank = len(self.nodes[src].shape)
        count = f"{index}.shape[{d}]" if along else f"{index}.numel()"
        # the source's elements the index reaches (torch allows a smaller index): the lanes walk those
        lines = [f"{src} = {src}.narrow({k}, 0, {index}.shape[{k}])" for k in range(rank) if along]
        lines += [] if along else [f"{src} = {src}.narrow({d}, 0, {count})"]
        lines += [f"{index} = {index}.contiguous()", f"{src} = {src}.contiguous()"]
        filled = self.nodes[base].op == "const"
        lines.append(f"{n}_n = {self.var(node.args[3]) if filled else f'{base}.shape[{d}]'}")
        lines += [f"{n}_count = {count}", f"{n}_si = math.prod({src}.shape[{d + 1}:])"]
        parts = ([f"*{src}.shape[:{d}]"] if d else []) + [f"{n}_n", f"*{src}.shape[{d + 1}:]"]
        lines.append(f"shape = ({', '.join(parts)})")
        dtype, device = self.dtype_expr(n), f"{src}.device"
        if filled:
            lines.append(f"{n} = torch.full(shape, {self.var(base)}, device={device}, dtype={dtype})")
        else:
            lines += [
                f"if tuple({base}.shape) != shape:",
                f"    raise ValueError(\"{n}: the base's shape differs from the source's outside dim {d}\")",
                f"{n} = {base}.contiguous().clone()",
            ]
        lines.append(f"numel = {src}.numel()")
        block = self.genes["BLOCK_SIZE"]
        call = ", ".join(a.removesuffix("_ptr") for a in args)
        lines.append("if numel > 0:")
        lines.append(f"    {name}[(cdiv(numel, {block}),)]({call}, BLOCK={block}, {self.launch_opts()})")
        lines.append(f"return {n}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        return Emitted("\n".join(kernel), "\n".join(launcher), self.launcher, self.tensors, self.scalars, [n], [name])
