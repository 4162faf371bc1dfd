"""Segment → Triton kernel source + launcher source. Pure string building; no torch at run time.

Every emitter returns an Emitted: the kernel(s), the launcher (a plain function taking tensors and
runtime scalars, allocating outputs with torch.empty and launching), and what it takes and returns.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

import torch

from foundry.codegen.expr import literal, pointwise
from foundry.codegen.genes import SPACE
from foundry.codegen.ir import Graph, Node, UnsupportedError
from foundry.codegen.plan import SCALAR_LEAVES, Segment, broadcastable, numel, right_align, row_role

log = logging.getLogger(__name__)

IDENTITY = {"sum": "0.0", "max": "-float('inf')", "min": "float('inf')", "gather": "0.0"}
WHOLE_ROW_N = int(SPACE["row.max_single_n"][-1])  # max_single_n at this: whole rows even where one pass loops


@dataclass
class Emitted:
    kernel: str
    launcher: str
    name: str
    tensors: list[str]  # node names passed as tensors, in order
    scalars: list[str]  # const nodes passed as runtime floats (symbolic constants), in order
    outputs: list[str]
    kernels: list[str] = field(default_factory=list)  # kernel function names
    reshaped: dict[str, str] = field(default_factory=dict)  # output → the view the forward applies to it


def next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def span(start: int, stop: int, rank: int) -> str:
    """A slice of a runtime shape counted from the end, so extra leading dims join the first group."""
    lo = "" if start == 0 else str(start - rank)
    hi = "" if stop == rank else str(stop - rank)
    return f"{lo}:{hi}"


def chan_merge(r: str, count: str, mean: str, m2: str) -> list[str]:
    """A block's Welford statistics (count, mean, M2) merged into the running {r}_count, {r}_mean and {r}_m2
    (Chan's parallel formula; an empty block leaves them as they are)."""
    return [
        f"{r}_delta = {mean} - {r}_mean",
        f"{r}_total = tl.maximum({r}_count + {count}, 1.0)",
        f"{r}_mean += {r}_delta * ({count} / {r}_total)",
        f"{r}_m2 += {m2} + {r}_delta * {r}_delta * ({r}_count * {count} / {r}_total)",
        f"{r}_count += {count}",
    ]


# Emitted once into a candidate whose launchers broadcast operands: torch.broadcast_shapes goes through
# torch's symbolic-shape checks (about 30 us of host time per call on the H100 machine), this is plain Python.
BROADCAST_HELPER = '''def broadcast_shape(*shapes):
    """The shape the operands broadcast to (torch.broadcast_shapes' result, without its symbolic-shape checks)."""
    if all(s == shapes[0] for s in shapes):
        return shapes[0]
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        size = 1
        for s in shapes:
            d = s[i - rank + len(s)] if i >= rank - len(s) else 1
            if d != 1:
                if size not in (1, d):
                    raise ValueError(f"shapes {list(shapes)} do not broadcast")
                size = d
        out.append(size)
    return torch.Size(out)'''


# Launch arithmetic on the host, emitted into a candidate whose launchers use it: triton.cdiv and
# triton.next_power_of_2 are constexpr functions that unwrap their arguments (14 and 19 us per call here,
# several per launch), these are plain integer arithmetic.
CDIV_HELPER = '''def cdiv(a, b):
    """Ceiling division of two host integers (a grid size)."""
    return -(-a // b)'''
NEXT_POWER_OF_2_HELPER = '''def next_power_of_2(n):
    """The smallest power of two >= n, for n >= 1 (a block size)."""
    return 1 << (n - 1).bit_length()'''
GROUP_STEP_HELPER = '''def group_step(strides, shape, first, last):
    """The step of the flat index over dims first..last: the stride of the innermost dim longer than 1 (0 if none)."""
    for k in range(last, first - 1, -1):
        if shape[k] > 1:
            return strides[k]
    return 0'''
HOST_HELPERS = {
    "broadcast_shape(": BROADCAST_HELPER,
    "cdiv(": CDIV_HELPER,
    "next_power_of_2(": NEXT_POWER_OF_2_HELPER,
    "group_step(": GROUP_STEP_HELPER,
}


def host_helpers(launchers: list[str]) -> list[str]:
    """The host helpers these launchers call, each once, in a fixed order."""
    used = []
    for call, source in HOST_HELPERS.items():
        if any(re.search(r"(?<![\w.])" + re.escape(call), text) for text in launchers):
            used.append(source)
    return used


def broadcast_line(tensors: list[str]) -> str:
    """`shape = ...`: the launch shape of the segment's operands."""
    if not tensors:
        return "shape = ()"
    if len(tensors) == 1:
        return f"shape = {tensors[0]}.shape"
    return f"shape = broadcast_shape({', '.join(f'{t}.shape' for t in tensors)})"


def indent(lines: list[str], n: int) -> list[str]:
    return [" " * n + line if line else line for line in lines]


class SegmentEmitter:
    """Shared machinery: operand classification, scalar arguments, output shapes, statements."""

    def __init__(self, graph: Graph, seg: Segment, genes: dict[str, Any], prefix: str, symbolic: set[str]) -> None:
        self.graph = graph
        self.nodes = graph.nodes
        self.seg = seg
        self.genes = genes
        self.prefix = prefix
        self.symbolic = symbolic  # const nodes whose value is a runtime argument
        self.members = set(seg.nodes)
        self.launcher = f"{prefix}_forward"
        self.tensors: list[str] = []
        self.scalars: list[str] = []
        self.sizes: list[str] = []
        self.gsources: set[str] = set()  # parameters read per channel by group norm
        for name in seg.nodes:
            for arg in self.nodes[name].args:
                self.classify(arg)

    def classify(self, arg: str) -> None:
        node = self.nodes[arg]
        if arg in self.members:
            return
        if node.op == "gparam":
            self.gsources.add(node.args[0])
            self.classify(node.args[0])
            return
        if node.op == "const":
            if arg in self.symbolic and arg not in self.scalars:
                self.scalars.append(arg)
        elif node.op == "size":
            if arg not in self.sizes:
                self.sizes.append(arg)
        elif arg not in self.tensors:
            self.tensors.append(arg)

    def var(self, name: str) -> str:
        node = self.nodes[name]
        if node.op == "const" and name not in self.symbolic:
            return literal(node.attrs["value"])
        return name

    def kernel_params(self) -> list[str]:
        return [f"{t}_ptr" for t in self.tensors] + [f"{o}_ptr" for o in self.seg.outputs] + self.scalars + self.sizes

    def launcher_params(self) -> list[str]:
        return self.tensors + self.scalars

    def load_cast(self, expr: str, name: str) -> str:
        dtype = self.nodes[name].dtype
        if dtype == torch.bool:
            return f"({expr} != 0)"
        return f"{expr}.to(tl.float32)" if dtype.is_floating_point else expr

    def store_value(self, name: str) -> str:
        return f"{name}.to({name}_ptr.dtype.element_ty)"

    def size_lines(self, shape_var: str) -> list[str]:
        """Launcher lines computing each size node from the runtime base shape."""
        lines = []
        for s in self.sizes:
            node = self.nodes[s]
            of = self.nodes[node.attrs["of"]]
            if of.shape != self.seg.base:
                raise UnsupportedError("size", "a mean over a value that is not the kernel's base")
            dims = node.attrs["dims"]
            rank = len(self.seg.base)
            expr = " * ".join(f"{shape_var}[{d - rank}]" for d in dims) or "1"
            off = node.attrs.get("offset", 0.0)
            lines.append(f"{s} = float({expr})" + (f" - {literal(off)}" if off else ""))
        return lines

    def statement(self, name: str) -> str:
        node = self.nodes[name]
        return f"{name} = {pointwise(node, [self.var(a) for a in node.args])}"

    def dtype_expr(self, name: str) -> str:
        return f"torch.{str(self.nodes[name].dtype).removeprefix('torch.')}"

    def launch_opts(self) -> str:
        return f"num_warps={self.genes['num_warps']}"


# -- pointwise ------------------------------------------------------------------------------------


class PointwiseEmitter(SegmentEmitter):
    """A flat walk over the output; broadcast operands are indexed by grouped coordinates."""

    def groups(self) -> list[list[int]]:
        base = self.seg.base
        bcast = [t for t in self.tensors if self.role(t) == "bcast"]
        pattern = []
        for d, size in enumerate(base):
            pattern.append(
                None if size == 1 else tuple(right_align(self.nodes[t].shape, len(base))[d] == size for t in bcast)
            )
        groups: list[list[int]] = []
        current: Any = "start"
        for d, p in enumerate(pattern):
            if groups and (p is None or p == current or current is None):
                groups[-1].append(d)
                if p is not None:
                    current = p
            else:
                groups.append([d])
                current = p
        return groups

    def role(self, name: str) -> str:
        node = self.nodes[name]
        if numel(node.shape) == 1:
            return "scalar"
        if node.shape == self.seg.base:
            return "full"
        return "bcast"

    def group_lines(self, used: list[int], groups: list[list[int]], bcast: list[str]) -> list[str]:
        """Launcher lines for the broadcast groups: each group's size and inner stride, and every
        broadcast tensor's stride per group it spans."""
        rank = len(self.seg.base)
        lines: list[str] = []
        for g in used:
            dims = groups[g]
            lines.append(f"size{g} = math.prod(shape[{span(dims[0], dims[-1] + 1, rank)}])")
            inner = "1" if dims[-1] + 1 == rank else f"math.prod(shape[{span(dims[-1] + 1, rank, rank)}])"
            lines.append(f"inner{g} = {inner}")
        for t in bcast:
            have = [g for g in used if self.has_group(t, groups[g])]
            for i, g in enumerate(have):
                later = " * ".join(f"size{h}" for h in have[i + 1 :]) or "1"
                lines.append(f"{t}_s{g} = {later}")
        return lines

    def has_group(self, t: str, group: list[int]) -> bool:
        aligned = right_align(self.nodes[t].shape, len(self.seg.base))
        return any(aligned[d] == self.seg.base[d] and self.seg.base[d] != 1 for d in group)

    def emit(self) -> Emitted:
        name = f"_{self.prefix}_fwd_kernel"
        groups = self.groups() if any(self.role(t) == "bcast" for t in self.tensors) else []
        bcast = [t for t in self.tensors if self.role(t) == "bcast"]
        used = [g for g in range(len(groups)) if any(self.has_group(t, groups[g]) for t in bcast)]
        group_args = [f"size{g}" for g in used] + [f"inner{g}" for g in used if g > 0 or True]
        stride_args = [f"{t}_s{g}" for t in bcast for g in used if self.has_group(t, groups[g])]
        params = self.kernel_params() + ["numel"] + group_args + stride_args + ["BLOCK: tl.constexpr"]
        body = [
            "pid = tl.program_id(0)",
            "offs = pid * BLOCK + tl.arange(0, BLOCK)",
            "mask = offs < numel",
        ]
        for g in used:
            body.append(f"coord{g} = (offs // inner{g}) % size{g}")
        for t in self.tensors:
            role = self.role(t)
            if role == "full":
                body.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + offs, mask=mask, other=0.0)', t)}")
            elif role == "scalar":
                body.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr)', t)}")
            else:
                index = " + ".join(f"coord{g} * {t}_s{g}" for g in used if self.has_group(t, groups[g]))
                body.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + {index}, mask=mask, other=0.0)', t)}")
        for n in self.seg.nodes:
            body.append(self.statement(n))
        for o in self.seg.outputs:
            body.append(f"tl.store({o}_ptr + offs, {self.store_value(o)}, mask=mask)")
        kernel = ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]
        last = len(groups) - 1
        rows_name = f"_{self.prefix}_rows_fwd_kernel"
        by_rows = self.genes.get("layout", "flat") == "rows" and bool(used) and last > 0
        if by_rows:
            row_groups = [g for g in used if g != last]
            row_args = [f"size{g}" for g in row_groups] + [f"rinner{g}" for g in row_groups]
            rparams = self.kernel_params() + ["C"] + row_args + stride_args + ["BLOCK: tl.constexpr"]
            rbody = [
                "# one program per (row of the leading dims, block of the last dims): broadcast indices per row",
                "row = tl.program_id(0)",
                "cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)",
                "mask = cols < C",
                "offs = row.to(tl.int64) * C + cols",
            ]
            rbody += [f"coord{g} = (row // rinner{g}) % size{g}" for g in row_groups]
            if last in used:
                rbody.append(f"coord{last} = cols")
            for t in self.tensors:
                role = self.role(t)
                if role == "bcast":
                    index = " + ".join(f"coord{g} * {t}_s{g}" for g in used if self.has_group(t, groups[g]))
                    if self.has_group(t, groups[last]):
                        load = f"tl.load({t}_ptr + {index}, mask=mask, other=0.0)"
                    else:
                        load = f"tl.load({t}_ptr + {index})"  # one value per row
                    rbody.append(f"{t} = {self.load_cast(load, t)}")
                else:
                    rbody.append(next(line for line in body if line.startswith(f"{t} = ")))
            rbody += body[3 + len(used) + len(self.tensors) :]
            kernel += ["", "", "@triton.jit", f"def {rows_name}({', '.join(rparams)}):", *indent(rbody, 4)]

        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):"]
        lines = []
        lines.append(broadcast_line(self.tensors))
        for t in self.tensors:
            lines.append(f"{t} = {t}.contiguous()")
        for o in self.seg.outputs:
            lines.append(f"{o} = torch.empty(shape, device={self.device()}, dtype={self.dtype_expr(o)})")
        lines.append("numel = math.prod(shape)")
        lines.extend(self.size_lines("shape"))
        rank = len(self.seg.base)
        lines.extend(self.group_lines(used, groups, bcast))
        block = self.genes["BLOCK_SIZE"]
        args = self.kernel_params() + ["numel"] + group_args + stride_args
        call_args = [a.removesuffix("_ptr") for a in args]
        flat_call = f"{name}[(cdiv(numel, {block}),)]({', '.join(call_args)}, BLOCK={block}, {self.launch_opts()})"
        if by_rows:
            dims = groups[last]
            lines.append(f"C = math.prod(shape[{span(dims[0], rank, rank)}])")
            rargs = [a.removesuffix("_ptr") for a in self.kernel_params()] + ["C"]
            rargs += [f"size{g}" for g in row_groups] + [f"inner{g} // C" for g in row_groups] + stride_args
            lines.append(f"if C >= {block // 2} and cdiv(C, {block}) < 65536:")
            lines.append(f"    grid = (numel // C, cdiv(C, {block}))")
            lines.append(f"    {rows_name}[grid]({', '.join(rargs)}, BLOCK={block}, {self.launch_opts()})")
            lines.append("else:")
            lines.append(f"    {flat_call}")
        else:
            lines.append(flat_call)
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher += indent(lines, 4)
        return Emitted(
            "\n".join(kernel),
            "\n".join(launcher),
            self.launcher,
            self.tensors,
            self.scalars,
            self.seg.outputs,
            [name, rows_name] if by_rows else [name],
        )

    def device(self) -> str:
        return f"{self.tensors[0]}.device" if self.tensors else "'cuda'"


# -- row: reductions over trailing dims --------------------------------------------------------------


class RowEmitter(SegmentEmitter):
    """One program per BLOCK_M rows. Whole rows in registers when they fit (one read of the input),
    else looped passes over column tiles, one per dependency level (online max+sum share a pass).
    With the `split` gene, few long rows are cut into chunks over programs instead (rowsplit.py)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        base, dims = self.seg.base, self.seg.dims
        self.roles: dict[str, str] = {}
        for t in self.tensors:
            node = self.nodes[t]
            if t in self.gsources:
                self.roles[t] = "gsrc"
                continue
            role = "scalar" if numel(node.shape) == 1 else row_role(node.shape, base, dims)
            if role is None:
                raise UnsupportedError(
                    node.op, f"operand of shape {list(node.shape)} in a row kernel over {list(base)}"
                )
            self.roles[t] = role
        for n in self.seg.nodes:
            node = self.nodes[n]
            if node.kind in ("reduce", "gather"):
                self.roles[n] = "perrow"
            else:
                arg_roles = {self.role(a) for a in node.args}
                self.roles[n] = next((r for r in ("full", "gchan", "colparam", "perrow") if r in arg_roles), "scalar")
                if self.roles[n] == "gchan" or ("colparam" in arg_roles and "perrow" in arg_roles):
                    self.roles[n] = "full"
        self.full_inputs = [t for t in self.tensors if self.roles[t] == "full"]
        if not self.full_inputs:
            raise UnsupportedError("row kernel", "no input has the full shape of the rows")
        for o in self.seg.outputs:
            if self.roles[o] not in ("full", "perrow"):
                raise UnsupportedError(self.nodes[o].op, "a row kernel stores only full rows or per-row values")
        self.online = self.find_online_pairs()
        self.welford = self.find_welford_pairs()
        self.welford_sums = set(self.welford.values())
        self.level = self.levels()

    def role(self, name: str) -> str:
        node = self.nodes[name]
        if node.op in SCALAR_LEAVES:
            return "scalar"
        if node.op == "gparam":
            return "gchan"
        return self.roles[name]

    def find_online_pairs(self) -> dict[str, str]:
        """sum(exp(v - max(v))) reductions that can share the max's pass (online softmax)."""
        pairs: dict[str, str] = {}
        if not self.genes.get("online_reduction", True):
            return pairs
        for n in self.seg.nodes:
            node = self.nodes[n]
            if node.op != "sum":
                continue
            e = self.nodes.get(node.args[0])
            if e is None or e.op != "exp" or e.name not in self.members:
                continue
            d = self.nodes[e.args[0]]
            if d.op != "sub" or d.name not in self.members:
                continue
            v, m = d.args
            mn = self.nodes[m]
            if mn.op == "max" and m in self.members and mn.args[0] == v:
                pairs[n] = m
        return pairs

    def find_welford_pairs(self) -> dict[str, str]:
        """sum((v - sum(v)/N)^2) reductions (squared as v*v, square or pow 2) that can share the pass of
        sum(v): a running mean and M2 merged tile by tile (Chan et al.), stable like the two-pass form, one
        read instead of two."""
        pairs: dict[str, str] = {}
        if not self.genes.get("online_reduction", True):
            return pairs
        for n in self.seg.nodes:
            node = self.nodes[n]
            if node.op != "sum":
                continue
            sq = self.nodes[node.args[0]]
            squared = (
                (sq.op == "mul" and sq.args[0] == sq.args[1])
                or sq.op == "square"
                or (sq.op == "pow" and sq.attrs.get("exponent") == 2.0)
            )
            if not squared or sq.name not in self.members:
                continue
            centered = self.nodes[sq.args[0]]
            if centered.op != "sub" or centered.name not in self.members:
                continue
            v, mean = (self.nodes[a] for a in centered.args)
            if mean.op != "div" or mean.name not in self.members:
                continue
            total, count = (self.nodes[a] for a in mean.args)
            if (
                total.op == "sum"
                and total.name in self.members
                and total.args[0] == v.name
                and count.op == "size"
                and tuple(count.attrs["dims"]) == self.seg.dims
                and not count.attrs.get("offset")
                and total.name not in self.online
            ):
                pairs[n] = total.name
        return pairs

    def deps_levels(self, name: str, memo: dict[str, int]) -> int:
        """Number of passes that must finish before `name` is known (its 'availability')."""
        if name in memo:
            return memo[name]
        node = self.nodes[name]
        if name not in self.members:
            memo[name] = 0
            return 0
        if node.kind in ("reduce", "gather"):
            if name in self.online:
                level = self.pass_of(self.online[name], memo)
            elif name in self.welford:
                level = self.pass_of(self.welford[name], memo)
            else:
                level = self.pass_of(name, memo)
            memo[name] = level + 1
        else:
            memo[name] = max((self.deps_levels(a, memo) for a in node.args), default=0)
        return memo[name]

    def pass_of(self, reduction: str, memo: dict[str, int]) -> int:
        return max((self.deps_levels(a, memo) for a in self.nodes[reduction].args), default=0)

    def levels(self) -> dict[str, int]:
        memo: dict[str, int] = {}
        for n in self.seg.nodes:
            self.deps_levels(n, memo)
        return memo

    # -- loads ----------------------------------------------------------------------------------------

    def load(self, t: str, single: bool) -> str:
        role = self.roles[t] if t in self.roles else self.role(t)
        mask = "mask"
        if role == "full":
            return self.load_cast(f"tl.load({t}_ptr + row_off + cols, mask={mask}, other=0.0)", t)
        if role == "perrow":
            return self.load_cast(f"tl.load({t}_ptr + rows, mask=row_mask, other=0)", t)
        if role == "colparam":
            return self.load_cast(f"tl.load({t}_ptr + cols, mask=cols < N, other=0.0)", t)
        return self.load_cast(f"tl.load({t}_ptr)", t)

    def gparam_load(self, g: str, single: bool) -> str:
        """A group-norm parameter at each element: its channel is (group, column // HW). In a tile loop whose
        tiles never cross a channel (CH_TILE: HW and the chunk start are multiples of BLOCK_N, decided by the
        launcher) the channel is one per tile and the load one value per row, not a gather per element."""
        p = self.nodes[g].args[0]
        gather = self.load_cast(f"tl.load({p}_ptr + (rows % G) * CPG + cols // HW, mask=mask, other=0.0)", p)
        if single:
            return gather
        tile = self.load_cast(f"tl.load({p}_ptr + (rows % G) * CPG + start // HW, mask=row_mask, other=0.0)", p)
        return f"({tile} if CH_TILE else {gather})"

    # -- statements -----------------------------------------------------------------------------------

    def closure(self, targets: list[str], known: set[str]) -> list[str]:
        """Member nodes (in order) needed to compute targets, given already-known values."""
        need: set[str] = set()
        todo = list(targets)
        while todo:
            n = todo.pop()
            if n in need or n in known:
                continue
            need.add(n)
            if n in self.members:  # a value from outside (a tensor, a group norm's parameter) is read, not computed
                todo.extend(self.nodes[n].args)
        ordered = [n for n in self.seg.nodes if n in need]
        extras = [n for n in need if n not in self.members]
        return sorted(extras) + ordered

    def value_lines(self, names: list[str], single: bool, reduce_inline: bool) -> list[str]:
        lines: list[str] = []
        for n in names:
            node = self.nodes[n]
            if n not in self.members:
                if node.op == "gparam":
                    lines.append(f"{n} = {self.gparam_load(n, single)}")
                elif n in self.tensors:
                    if self.roles.get(n) not in ("perrow", "gsrc"):
                        lines.append(f"{n} = {self.load(n, single)}")
                continue
            if node.kind in ("reduce", "gather"):
                if reduce_inline:
                    lines.extend(self.inline_reduction(n))
                continue
            lines.append(self.statement(n))
        return lines

    def masked(self, n: str, value: str) -> str:
        op = self.nodes[n].op
        ident = IDENTITY.get(op, "-float('inf')" if op == "argmax" else "float('inf')")
        return f"tl.where(mask, {value}, {ident})"

    def inline_reduction(self, n: str) -> list[str]:
        node = self.nodes[n]
        src = self.var(node.args[0])
        if node.op == "gather":
            target = node.args[1]
            return [f"{n} = tl.sum(tl.where(mask & (cols == {target}), {src}, 0.0), axis=1, keep_dims=True)"]
        fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min", "argmax": "tl.argmax", "argmin": "tl.argmin"}
        return [f"{n} = {fn[node.op]}({self.masked(n, src)}, axis=1, keep_dims=True)"]

    def perrow_inputs(self) -> list[str]:
        return [t for t in self.tensors if self.roles[t] == "perrow"]

    def header(self, block_n_range: str) -> list[str]:
        lines = [
            "pid = tl.program_id(0)",
            "rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]",
            "row_mask = rows < M",
            "row_off = rows.to(tl.int64) * N",
        ]
        for t in self.perrow_inputs():
            lines.append(f"{t} = {self.load(t, True)}")
        return lines

    def stores(self, names: list[str]) -> list[str]:
        lines = []
        for o in names:
            if self.roles[o] == "full":
                lines.append(f"tl.store({o}_ptr + row_off + cols, {self.store_value(o)}, mask=mask)")
            else:
                lines.append(f"tl.store({o}_ptr + rows, {self.store_value(o)}, mask=row_mask)")
        return lines

    def single_kernel(self, name: str) -> list[str]:
        body = self.header("")
        body += ["cols = tl.arange(0, BLOCK_N)[None, :]", "mask = row_mask & (cols < N)"]
        known = set(self.perrow_inputs())
        order = self.closure(list(self.seg.outputs), known)
        body += self.value_lines(order, True, True)
        body += self.stores(self.seg.outputs)
        return ["@triton.jit", f"def {name}({', '.join(self.params())}):", *indent(body, 4)]

    def gparams(self) -> list[str]:
        """The group-norm parameter reads (per channel of a group) among the segment's arguments."""
        return [a for n in self.seg.nodes for a in self.nodes[n].args if self.nodes[a].op == "gparam"]

    def params(self, looped: bool = False) -> list[str]:
        extra = ["G", "CPG", "HW"] if self.gparams() else []
        tail = ["CH_TILE: tl.constexpr"] if looped and extra else []
        return self.kernel_params() + ["M", "N"] + extra + ["BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", *tail]

    def loop_kernel(self, name: str) -> list[str]:
        body = self.header("")
        known = set(self.perrow_inputs())
        reductions = [n for n in self.seg.nodes if self.nodes[n].kind in ("reduce", "gather")]
        passes = max((self.level[r] for r in reductions), default=0)
        full_outs = [o for o in self.seg.outputs if self.roles[o] == "full"]
        row_outs = [o for o in self.seg.outputs if self.roles[o] == "perrow"]
        last = max([passes] + [self.level[o] for o in full_outs]) if full_outs else passes
        stored: set[str] = set()
        for p in range(last + 1):
            # per-row values that are known before this pass
            ready = [
                n
                for n in self.seg.nodes
                if self.roles[n] in ("perrow", "scalar")
                and self.nodes[n].kind not in ("reduce", "gather")
                and self.level[n] <= p
                and n not in known
            ]
            body += self.value_lines(self.closure(ready, known), False, False)
            known |= set(self.closure(ready, known))
            outs = [o for o in row_outs if o in known and o not in stored]
            body += self.stores(outs)
            stored |= set(outs)
            here = [r for r in reductions if self.level[r] == p + 1]
            stores_here = [o for o in full_outs if self.level[o] == p and o not in stored]
            if not here and not stores_here:
                continue
            for r in here:
                body += self.acc_init(r)
            loop: list[str] = ["cols = start + tl.arange(0, BLOCK_N)[None, :]", "mask = row_mask & (cols < N)"]
            tiled = [r for r in here if not self.direct_gather(r)]
            targets = [self.nodes[r].args[0] for r in tiled if r not in self.online and r not in self.welford]
            targets += stores_here
            targets += [self.nodes[self.online[r]].args[0] for r in here if r in self.online]
            inner = self.closure(targets, known)
            loop += self.value_lines(inner, False, False)
            for r in here:
                loop += self.acc_update(r)
            loop += self.stores(stores_here)
            stored |= set(stores_here)
            body.append("for start in range(0, N, BLOCK_N):")
            body += indent(loop, 4)
            for r in here:
                body += self.acc_collapse(r)
            for r in here:
                body += self.acc_final(r)
            known |= set(here)
        ready = [
            n
            for n in self.seg.nodes
            if n not in known
            and self.roles[n] in ("perrow", "scalar")
            and self.nodes[n].kind not in ("reduce", "gather")
        ]
        body += self.value_lines(self.closure(ready, known), False, False)
        known |= set(ready)
        body += self.stores([o for o in row_outs if o not in stored])
        return ["@triton.jit", f"def {name}({', '.join(self.params(looped=True))}):", *indent(body, 4)]

    def direct_gather(self, r: str) -> bool:
        """A gather from a row of an input tensor: one load at the target column, before the tile loop (a
        tile loop would compare every column with the target and accumulate a tile of mostly zeros)."""
        node = self.nodes[r]
        return node.op == "gather" and node.args[0] in self.tensors and self.roles.get(node.args[0]) == "full"

    def acc_init(self, r: str) -> list[str]:
        op = self.nodes[r].op
        if self.direct_gather(r):
            src, target = self.nodes[r].args
            inside = f"row_mask & ({target} >= 0) & ({target} < N)"  # else 0, as no column matches
            load = f"tl.load({src}_ptr + row_off + {target}, mask={inside}, other=0.0)"
            return [f"{r} = {self.load_cast(load, src)}"]
        if r in self.welford:
            return []
        if r in self.welford_sums:
            width = "BLOCK_N" if self.lane_welford else "1"
            return [f"{r}_{part} = tl.zeros([BLOCK_M, {width}], dtype=tl.float32)" for part in ("count", "mean", "m2")]
        if r in self.online:
            return [f"{r}_run = tl.zeros([BLOCK_M, 1], dtype=tl.float32)"]
        if op in ("sum", "gather"):
            return [f"{r}_acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)"]
        if op in ("max", "min"):
            if any(self.online.get(s) == r for s in self.online):
                return [f"{r} = tl.full([BLOCK_M, 1], -float('inf'), dtype=tl.float32)"]
            ident = IDENTITY[op]
            return [f"{r}_acc = tl.full([BLOCK_M, BLOCK_N], {ident}, dtype=tl.float32)"]
        ident = "-float('inf')" if op == "argmax" else "float('inf')"
        return [
            f"{r}_best = tl.full([BLOCK_M, 1], {ident}, dtype=tl.float32)",
            f"{r} = tl.zeros([BLOCK_M, 1], dtype=tl.int64)",
        ]

    def acc_update(self, r: str) -> list[str]:
        node = self.nodes[r]
        src = self.var(node.args[0])
        if r in self.welford:
            return []  # the paired sum merges the tile's M2
        if r in self.welford_sums and self.lane_welford:
            # every lane keeps its own count/mean/M2 (no block-wide reduction per tile); acc_collapse merges
            return [
                f"{r}_n = {r}_count + mask.to(tl.float32)",
                f"{r}_dev = tl.where(mask, {src} - {r}_mean, 0.0)",
                f"{r}_mean += {r}_dev / tl.maximum({r}_n, 1.0)",
                f"{r}_m2 += {r}_dev * tl.where(mask, {src} - {r}_mean, 0.0)",
                f"{r}_count = {r}_n",
            ]
        if r in self.welford_sums:
            return [
                f"{r}_tcount = tl.sum(mask.to(tl.float32), axis=1, keep_dims=True)",
                f"{r}_tmean = tl.sum(tl.where(mask, {src}, 0.0), axis=1, keep_dims=True) / tl.maximum({r}_tcount, 1.0)",
                f"{r}_dev = tl.where(mask, {src} - {r}_tmean, 0.0)",
                f"{r}_tm2 = tl.sum({r}_dev * {r}_dev, axis=1, keep_dims=True)",
                *chan_merge(r, f"{r}_tcount", f"{r}_tmean", f"{r}_tm2"),
            ]
        if r in self.online:
            m = self.online[r]
            v = self.var(self.nodes[m].args[0])
            return [
                f"{m}_new = tl.maximum({m}, tl.max(tl.where(mask, {v}, -float('inf')), axis=1, keep_dims=True))",
                # 0 for a max still -inf (every value so far -inf): exp(-inf - -inf) would be NaN
                f"{m}_safe = tl.where({m}_new == -float('inf'), 0.0, {m}_new)",
                f"{r}_run = {r}_run * tl.exp({m} - {m}_safe) + tl.sum(tl.where(mask, tl.exp({v} - {m}_safe), 0.0), "
                f"axis=1, keep_dims=True)",
                f"{m} = {m}_new",
            ]
        if any(self.online.get(s) == r for s in self.online):
            return []  # the paired sum updates the running max
        if node.op == "sum":
            return [f"{r}_acc += tl.where(mask, {src}, 0.0)"]
        if node.op == "gather":
            if self.direct_gather(r):
                return []  # loaded before the loop
            return [f"{r}_acc += tl.where(mask & (cols == {node.args[1]}), {src}, 0.0)"]
        if node.op in ("max", "min"):
            fn = "tl.maximum" if node.op == "max" else "tl.minimum"
            return [f"{r}_acc = {fn}({r}_acc, {self.masked(r, src)})"]
        red, cmp = ("tl.max", ">") if node.op == "argmax" else ("tl.min", "<")
        arg = "tl.argmax" if node.op == "argmax" else "tl.argmin"
        return [
            f"{r}_tile = {self.masked(r, src)}",
            f"{r}_val = {red}({r}_tile, axis=1, keep_dims=True)",
            f"{r}_idx = {arg}({r}_tile, axis=1, keep_dims=True).to(tl.int64) + start",
            f"{r}_take = {r}_val {cmp} {r}_best",
            f"{r} = tl.where({r}_take, {r}_idx, {r})",
            f"{r}_best = tl.where({r}_take, {r}_val, {r}_best)",
        ]

    @property
    def lane_welford(self) -> bool:
        """Gene welford: "tile" merges each tile's statistics into the row's (three block reductions per
        tile), "lane" keeps them per lane and merges the lanes once after the loop (Chan's formula)."""
        return self.genes.get("welford", "tile") == "lane"

    def acc_collapse(self, r: str) -> list[str]:
        """After the loop: a Welford sum's per-lane count/mean/M2 merged into the row's."""
        if r not in self.welford_sums or not self.lane_welford:
            return []
        return [
            f"{r}_total = tl.sum({r}_count, axis=1, keep_dims=True)",
            f"{r}_rmean = tl.sum({r}_count * {r}_mean, axis=1, keep_dims=True) / tl.maximum({r}_total, 1.0)",
            f"{r}_ldev = {r}_mean - {r}_rmean",
            f"{r}_m2 = tl.sum({r}_m2 + {r}_count * {r}_ldev * {r}_ldev, axis=1, keep_dims=True)",
            f"{r}_mean = {r}_rmean",
            f"{r}_count = {r}_total",
        ]

    def acc_final(self, r: str) -> list[str]:
        op = self.nodes[r].op
        if r in self.welford:
            return [f"{r} = {self.welford[r]}_m2"]
        if r in self.welford_sums:
            return [f"{r} = {r}_mean * {r}_count"]
        if r in self.online:
            return [f"{r} = {r}_run"]
        if any(self.online.get(s) == r for s in self.online) or op in ("argmax", "argmin") or self.direct_gather(r):
            return []
        fn = {"sum": "tl.sum", "gather": "tl.sum", "max": "tl.max", "min": "tl.min"}[op]
        return [f"{r} = {fn}({r}_acc, axis=1, keep_dims=True)"]

    def emit(self) -> Emitted:
        single_name = f"_{self.prefix}_fwd_kernel"
        loop_name = f"_{self.prefix}_loop_fwd_kernel"
        max_single = int(self.genes.get("max_single_n", 8192))
        loop_source = self.loop_kernel(loop_name)
        one_pass = sum(1 for line in loop_source if line.strip().startswith("for start in range(")) <= 1
        if one_pass and max_single < WHOLE_ROW_N:
            # the looped kernel already reads each row once: tiles keep more programs busy. At the gene's top
            # value whole rows are kept anyway, with no block-wide reduction per tile; which wins is measured
            # (H200, 2026-12-04: argmax rows 0.130 against 0.149 ms looped; cross entropy 0.353 against 0.267)
            max_single = 0
        # ship only the branches a verified shape takes: the row lengths of every shape the operator declares
        # (the evaluator runs those, and varies rows, never their length). Whole rows past max_single_n
        # stay correct in the single kernel (slower, in registers), long rows in the loop kernel.
        lengths = [n for n in self.genes.get("row_lengths", ()) if n > 0]
        whole_rows = max_single > 0 and (not lengths or any(next_pow2(n) <= max_single for n in lengths))
        looped = not whole_rows or any(next_pow2(n) > max_single for n in lengths) or not lengths
        self.branches = (whole_rows, looped)
        kernels: list[str] = []
        names: list[str] = []
        if whole_rows:
            kernels.append("\n".join(self.single_kernel(single_name)))
            names.append(single_name)
        if looped:
            kernels.append("\n".join(loop_source))
            names.append(loop_name)
        split = self.split_kernels()
        partial_name, finish_name = f"_{self.prefix}_split_partial_kernel", f"_{self.prefix}_split_fwd_kernel"
        one_name = f"_{self.prefix}_split_one_kernel" if split is not None and split.one_launch else None
        if split is not None:
            if one_name is not None:
                kernels.append("\n".join(split.one_kernel(one_name)))
                names.append(one_name)
            kernels += ["\n".join(split.partial_kernel(partial_name)), "\n".join(split.finish_kernel(finish_name))]
            names += [partial_name, finish_name]

        base_t = self.full_inputs[0]
        k = len(self.seg.dims)
        lines = [f"{t} = {t}.contiguous()" for t in self.tensors]
        lines.append(f"shape = {base_t}.shape")
        lines.append(f"N = math.prod(shape[{-k}:])")
        lines.append(f"M = math.prod(shape[:{-k}])")
        lines.extend(self.size_lines("shape"))
        for o in self.seg.outputs:
            lines.append(f"{o} = torch.empty({self.out_shape(o)}, device={base_t}.device, dtype={self.dtype_expr(o)})")
        extra: list[str] = []
        ch_tile = ""
        gp = self.gparams()
        if gp:
            p = self.nodes[gp[0]].args[0]
            lines += ["G = shape[1]", f"CPG = {p}.numel() // G", "HW = N // CPG"]
            extra = ["G", "CPG", "HW"]
            ch_tile = f", CH_TILE=HW % {self.genes['BLOCK_N']} == 0"  # tiles inside one channel
        block_m = self.genes["BLOCK_M"]
        call = [a.removesuffix("_ptr") for a in self.kernel_params()] + ["M", "N"] + extra
        grid = f"(cdiv(M, {block_m}),)"
        loop_call = (
            f"{loop_name}[{grid}]({', '.join(call)}, BLOCK_M={block_m}, "
            f"BLOCK_N={self.genes['BLOCK_N']}{ch_tile}, {self.launch_opts()})"
        )
        single_call = (
            f"{single_name}[{grid}]({', '.join(call)}, BLOCK_M={block_m}, "
            f"BLOCK_N=next_power_of_2(N), {self.launch_opts()})"
        )
        whole: list[str] = []
        if whole_rows and looped:
            whole.append(f"if next_power_of_2(N) <= {max_single}:  # whole rows in registers")
            whole.append(f"    {single_call}")
            whole.append("else:  # longer rows: a loop over column tiles")
            whole.append(f"    {loop_call}")
        else:
            whole.append(single_call if whole_rows else loop_call)
        if split is not None:
            lines += split.launcher_lines(partial_name, finish_name, f"{base_t}.device", call, whole, one_name)
        else:
            lines += whole
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        return Emitted(
            "\n\n\n".join(kernels),
            "\n".join(launcher),
            self.launcher,
            self.tensors,
            self.scalars,
            self.seg.outputs,
            names,
        )

    def split_kernels(self) -> Any:
        """The split-row kernels (foundry.codegen.rowsplit.RowSplit) when the `split` gene asks for them
        and the segment's reductions can be merged from partials, else None."""
        if self.genes.get("split", 1) in (1, None):
            return None
        from foundry.codegen.rowsplit import RowSplit

        split = RowSplit(self)
        why = split.reason()
        if why is not None:
            log.debug("row segment %s: not split (%s)", self.prefix, why)
            return None
        return split

    def out_shape(self, o: str) -> str:
        node = self.nodes[o]
        r, k = len(self.seg.base), len(self.seg.dims)
        if self.roles[o] == "full":
            return "shape"
        if len(node.shape) == r:
            return f"tuple(shape[:{-k}]) + {(1,) * k!r}"
        return f"tuple(shape[:{-k}])"


# -- full reductions -------------------------------------------------------------------------------


class FullEmitter(PointwiseEmitter):
    """Reductions over every element: each program reduces a strided share into partials, then
    one program combines them and runs the epilogue (deterministic: no atomics)."""

    def emit(self) -> Emitted:
        reductions = [n for n in self.seg.nodes if self.nodes[n].kind == "reduce"]
        for r in reductions:
            if self.nodes[r].op not in ("sum", "max", "min"):
                raise UnsupportedError(f"{self.nodes[r].op} over all elements", "no full-tensor template")
        prologue = [
            n for n in self.seg.nodes if self.nodes[n].shape == self.seg.base and self.nodes[n].kind == "pointwise"
        ]
        epilogue = [n for n in self.seg.nodes if n not in prologue and n not in reductions]
        big = [
            t
            for t in self.tensors
            if self.nodes[t].shape == self.seg.base
            or (broadcastable(self.nodes[t].shape, self.seg.base) and numel(self.nodes[t].shape) > 1)
        ]
        small = [t for t in self.tensors if t not in big]
        full_outs = [o for o in self.seg.outputs if o in prologue]
        end_outs = [o for o in self.seg.outputs if o not in prologue]
        if any(o in reductions or o in epilogue for o in full_outs):
            raise UnsupportedError("full reduction", "mixed outputs")
        part_name = f"_{self.prefix}_partial_kernel"
        comb_name = f"_{self.prefix}_combine_kernel"
        self.tensors_saved = self.tensors
        # partial kernel over the big operands
        self.tensors = big
        groups = self.groups() if any(self.role(t) == "bcast" for t in big) else []
        bcast = [t for t in big if self.role(t) == "bcast"]
        used = [g for g in range(len(groups)) if any(self.has_group(t, groups[g]) for t in bcast)]
        group_args = [f"size{g}" for g in used] + [f"inner{g}" for g in used]
        stride_args = [f"{t}_s{g}" for t in bcast for g in used if self.has_group(t, groups[g])]
        prologue_scalars = [s for s in self.scalars if any(s in self.nodes[n].args for n in prologue)]
        prologue_sizes = [s for s in self.sizes if any(s in self.nodes[n].args for n in prologue)]
        params = (
            [f"{t}_ptr" for t in big]
            + [f"{o}_ptr" for o in full_outs]
            + ["partial_ptr"]
            + prologue_scalars
            + prologue_sizes
            + ["numel"]
            + group_args
            + stride_args
            + ["BLOCK: tl.constexpr"]
        )
        body = ["pid = tl.program_id(0)", "nprog = tl.num_programs(0)"]
        for r in reductions:
            ident = IDENTITY[self.nodes[r].op]
            body.append(f"{r}_acc = tl.full([BLOCK], {ident}, dtype=tl.float32)")
        loop = ["offs = start + tl.arange(0, BLOCK)", "mask = offs < numel"]
        for g in used:
            loop.append(f"coord{g} = (offs // inner{g}) % size{g}")
        for t in big:
            if self.role(t) == "full":
                loop.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + offs, mask=mask, other=0.0)', t)}")
            else:
                index = " + ".join(f"coord{g} * {t}_s{g}" for g in used if self.has_group(t, groups[g]))
                loop.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + {index}, mask=mask, other=0.0)', t)}")
        for n in prologue:
            loop.append(self.statement(n))
        for r in reductions:
            node = self.nodes[r]
            src = self.var(node.args[0])
            if node.op == "sum":
                loop.append(f"{r}_acc += tl.where(mask, {src}, 0.0)")
            else:
                fn = "tl.maximum" if node.op == "max" else "tl.minimum"
                loop.append(f"{r}_acc = {fn}({r}_acc, tl.where(mask, {src}, {IDENTITY[node.op]}))")
        for o in full_outs:
            loop.append(f"tl.store({o}_ptr + offs, {self.store_value(o)}, mask=mask)")
        body.append("for start in range(pid * BLOCK, numel, nprog * BLOCK):")
        body += indent(loop, 4)
        k = len(reductions)
        for i, r in enumerate(reductions):
            fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[self.nodes[r].op]
            body.append(f"tl.store(partial_ptr + pid * {k} + {i}, {fn}({r}_acc, axis=0))")
        part = ["@triton.jit", f"def {part_name}({', '.join(params)}):", *indent(body, 4)]

        # combine kernel: partials → reductions → epilogue → scalar outputs
        epi_scalars = [s for s in self.scalars if any(s in self.nodes[n].args for n in epilogue)]
        epi_sizes = [s for s in self.sizes if any(s in self.nodes[n].args for n in epilogue)]
        cparams = (
            ["partial_ptr"]
            + [f"{t}_ptr" for t in small]
            + [f"{o}_ptr" for o in end_outs]
            + epi_scalars
            + epi_sizes
            + ["P", "BLOCK_P: tl.constexpr"]
        )
        cbody = ["offs = tl.arange(0, BLOCK_P)", "mask = offs < P"]
        for i, r in enumerate(reductions):
            op = self.nodes[r].op
            fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[op]
            cbody.append(
                f"{r} = {fn}(tl.load(partial_ptr + offs * {k} + {i}, mask=mask, other={IDENTITY[op]}), axis=0)"
            )
        for t in small:
            cbody.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr)', t)}")
        for n in epilogue:
            cbody.append(self.statement(n))
        for o in end_outs:
            cbody.append(f"tl.store({o}_ptr, {self.store_value(o)})")
        comb = ["@triton.jit", f"def {comb_name}({', '.join(cparams)}):", *indent(cbody, 4)]

        self.tensors = self.tensors_saved
        block = self.genes["BLOCK_SIZE"]
        lines = [f"{t} = {t}.contiguous()" for t in self.tensors]
        lines.append(broadcast_line(big))
        lines.append("numel = math.prod(shape)")
        lines.extend(self.size_lines("shape"))
        lines.extend(self.group_lines(used, groups, bcast))
        dev = f"{big[0]}.device"
        for o in full_outs:
            lines.append(f"{o} = torch.empty(shape, device={dev}, dtype={self.dtype_expr(o)})")
        for o in end_outs:
            lines.append(f"{o} = torch.empty({tuple(self.nodes[o].shape)!r}, device={dev}, dtype={self.dtype_expr(o)})")
        lines.append(f"P = max(1, min({self.genes['partials']}, cdiv(numel, {block})))")
        lines.append(f"partial = torch.empty((P, {k}), device={dev}, dtype=torch.float32)")
        pcall = [*big, *full_outs, "partial", *prologue_scalars, *prologue_sizes, "numel"] + group_args + stride_args
        lines.append(f"{part_name}[(P,)]({', '.join(pcall)}, BLOCK={block}, {self.launch_opts()})")
        ccall = ["partial", *small, *end_outs, *epi_scalars, *epi_sizes, "P"]
        lines.append(f"{comb_name}[(1,)]({', '.join(ccall)}, BLOCK_P=next_power_of_2(P), num_warps=4)")
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        return Emitted(
            "\n".join(part) + "\n\n\n" + "\n".join(comb),
            "\n".join(launcher),
            self.launcher,
            self.tensors,
            self.scalars,
            self.seg.outputs,
            [part_name, comb_name],
        )


# -- col: reduction over middle dims ----------------------------------------------------------------


class ColEmitter(SegmentEmitter):
    """Base viewed as (outer, reduced, inner): programs own a strip of `inner` (coalesced) and walk
    the reduced dims in tiles of BLOCK_R."""

    def group_aligned(self, t: str, groups: tuple[tuple[int, int], ...]) -> bool:
        """Does operand `t` (broadcast against the base) span each of the (outer, reduced, inner) groups
        wholly or not at all, so that one stride per group addresses it?"""
        base = self.seg.base
        shape = (1,) * (len(base) - len(self.nodes[t].shape)) + tuple(self.nodes[t].shape)
        for a, b in groups:
            dims = [k for k in range(a, b) if base[k] > 1]
            if not (all(shape[k] == 1 for k in dims) or all(shape[k] == base[k] for k in dims)):
                return False
        return True

    def splits(self, reductions: list[str], epilogue: list[str]) -> int:
        """Programs per strip of the inner dims along the reduced dims (gene `split`): 1, or S chunks of the
        reduced rows whose partials a second kernel merges in a fixed order, where every reduction is a sum,
        max or min and the epilogue reads only the reductions, constants and sizes (it runs in the merge)."""
        split = int(self.genes.get("split", 1))
        if split == 1:
            return 1
        if any(self.nodes[r].op not in ("sum", "max", "min") for r in reductions):
            return 1
        after = set(reductions) | set(epilogue)
        for n in epilogue:
            for a in self.nodes[n].args:
                if a not in after and self.nodes[a].op not in ("const", "size"):
                    return 1
        return split

    def emit(self) -> Emitted:
        reductions = [n for n in self.seg.nodes if self.nodes[n].kind == "reduce"]
        prologue = [
            n for n in self.seg.nodes if self.nodes[n].shape == self.seg.base and self.nodes[n].kind == "pointwise"
        ]
        epilogue = [n for n in self.seg.nodes if n not in prologue and n not in reductions]
        split = self.splits(reductions, epilogue)
        d0, d1 = self.seg.dims[0], self.seg.dims[-1] + 1
        groups = ((0, d0), (d0, d1), (d1, len(self.seg.base)))
        if not any(self.nodes[t].shape == self.seg.base for t in self.tensors):
            raise UnsupportedError("reduction", "no operand of the full shape in a middle-dim reduction")
        # broadcast operands (a per-channel weight): addressed with one stride per (outer, reduced, inner)
        # group where they span each group's dims wholly or not at all; others are expanded in the launcher
        broadcast = [
            t for t in self.tensors if self.nodes[t].shape != self.seg.base and numel(self.nodes[t].shape) != 1
        ]
        strided = [t for t in broadcast if self.group_aligned(t, groups)]
        strides = [f"{t}_{g}" for t in strided for g in ("so", "sr", "si")]
        full_outs = [o for o in self.seg.outputs if o in prologue]
        red_outs = [o for o in self.seg.outputs if o not in prologue]
        strip = [
            "n_inner = tl.cdiv(INNER, BLOCK_I)",
            "outer = pid // n_inner",
            "inner = (pid % n_inner) * BLOCK_I + tl.arange(0, BLOCK_I)[None, :]",
            "inner_mask = inner < INNER",
        ]
        if split > 1:
            # pass 1 over a (strips, S) grid: each program reduces CHUNK rows of its strip to partials
            name = f"_{self.prefix}_col_partial_kernel"
            parts = [f"{r}_part_ptr" for r in reductions]
            params = [f"{t}_ptr" for t in self.tensors] + [f"{o}_ptr" for o in full_outs] + parts
            params += self.scalars + self.sizes + ["R", "INNER", "CHUNK", "S", *strides]
            params += ["BLOCK_R: tl.constexpr", "BLOCK_I: tl.constexpr"]
            body = ["pid = tl.program_id(0)", "chunk = tl.program_id(1)", *strip]
            body += ["base = outer.to(tl.int64) * R * INNER", "lo = chunk * CHUNK", "hi = tl.minimum(lo + CHUNK, R)"]
        else:
            name = f"_{self.prefix}_fwd_kernel"
            params = self.kernel_params() + ["R", "INNER", *strides, "BLOCK_R: tl.constexpr", "BLOCK_I: tl.constexpr"]
            body = ["pid = tl.program_id(0)", *strip, "base = outer.to(tl.int64) * R * INNER"]
        for r in reductions:
            op = self.nodes[r].op
            if op in ("argmax", "argmin"):
                ident = "-float('inf')" if op == "argmax" else "float('inf')"
                body += [
                    f"{r}_best = tl.full([1, BLOCK_I], {ident}, dtype=tl.float32)",
                    f"{r} = tl.zeros([1, BLOCK_I], dtype=tl.int64)",
                ]
            else:
                body.append(f"{r}_acc = tl.full([BLOCK_R, BLOCK_I], {IDENTITY[op]}, dtype=tl.float32)")
        loop = [
            "red = start + tl.arange(0, BLOCK_R)[:, None]",
            "mask = (red < hi) & inner_mask" if split > 1 else "mask = (red < R) & inner_mask",
            "offs = base + red * INNER + inner",
        ]
        for t in self.tensors:
            if numel(self.nodes[t].shape) == 1:
                loop.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr)', t)}")
            elif t in strided:
                off = f"outer.to(tl.int64) * {t}_so + red * {t}_sr + inner * {t}_si"
                loop.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + {off}, mask=mask, other=0.0)', t)}")
            else:
                loop.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + offs, mask=mask, other=0.0)', t)}")
        for n in prologue:
            loop.append(self.statement(n))
        for r in reductions:
            node = self.nodes[r]
            src = self.var(node.args[0])
            if node.op == "sum":
                loop.append(f"{r}_acc += tl.where(mask, {src}, 0.0)")
            elif node.op in ("max", "min"):
                fn = "tl.maximum" if node.op == "max" else "tl.minimum"
                loop.append(f"{r}_acc = {fn}({r}_acc, tl.where(mask, {src}, {IDENTITY[node.op]}))")
            else:
                red, cmp = ("tl.max", ">") if node.op == "argmax" else ("tl.min", "<")
                arg = "tl.argmax" if node.op == "argmax" else "tl.argmin"
                ident = "-float('inf')" if node.op == "argmax" else "float('inf')"
                loop += [
                    f"{r}_tile = tl.where(mask, {src}, {ident})",
                    f"{r}_val = {red}({r}_tile, axis=0, keep_dims=True)",
                    f"{r}_idx = {arg}({r}_tile, axis=0, keep_dims=True).to(tl.int64) + start",
                    f"{r}_take = {r}_val {cmp} {r}_best",
                    f"{r} = tl.where({r}_take, {r}_idx, {r})",
                    f"{r}_best = tl.where({r}_take, {r}_val, {r}_best)",
                ]
        for o in full_outs:
            loop.append(f"tl.store({o}_ptr + offs, {self.store_value(o)}, mask=mask)")
        body.append("for start in range(lo, hi, BLOCK_R):" if split > 1 else "for start in range(0, R, BLOCK_R):")
        body += indent(loop, 4)
        for r in reductions:
            op = self.nodes[r].op
            if op in ("sum", "max", "min"):
                fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[op]
                body.append(f"{r} = {fn}({r}_acc, axis=0, keep_dims=True)")
        # the epilogue and the reduced outputs' stores: after the loop, or in the merge kernel when split
        tail = [self.statement(n) for n in epilogue] + [
            f"tl.store({o}_ptr + outer.to(tl.int64) * INNER + inner, {self.store_value(o)}, mask=inner_mask)"
            for o in red_outs
        ]
        if split > 1:
            at = "(outer.to(tl.int64) * S + chunk) * INNER + inner"
            body += [f"tl.store({r}_part_ptr + {at}, {r}, mask=inner_mask)" for r in reductions]
            kernel = ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]
            # pass 2, one program per strip: the S partials merged in order, then the epilogue
            comb_name = f"_{self.prefix}_col_combine_kernel"
            cparams = parts + [f"{o}_ptr" for o in red_outs] + self.scalars + self.sizes
            cparams += ["INNER", "S", "BLOCK_I: tl.constexpr"]
            cbody = ["pid = tl.program_id(0)", *strip]
            cbody += [
                f"{r} = tl.full([1, BLOCK_I], {IDENTITY[self.nodes[r].op]}, dtype=tl.float32)" for r in reductions
            ]
            merge = []
            for r in reductions:
                op = self.nodes[r].op
                part = f"tl.load({r}_part_ptr + (outer.to(tl.int64) * S + s) * INNER + inner, mask=inner_mask)"
                if op == "sum":
                    merge.append(f"{r} += {part}")
                else:
                    merge.append(f"{r} = {'tl.maximum' if op == 'max' else 'tl.minimum'}({r}, {part})")
            cbody += ["for s in range(0, S):", *indent(merge, 4), *tail]
            kernel += ["", "", "@triton.jit", f"def {comb_name}({', '.join(cparams)}):", *indent(cbody, 4)]
        else:
            body += tail
            kernel = ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

        base_t = next(t for t in self.tensors if self.nodes[t].shape == self.seg.base)
        lines = [f"{t} = {t}.contiguous()" for t in self.tensors]
        lines += [
            f"shape = {base_t}.shape",
            f"OUTER = math.prod(shape[:{d0}])",
            f"R = math.prod(shape[{d0}:{d1}])",
            f"INNER = math.prod(shape[{d1}:])",
        ]
        for t in broadcast:
            if t not in strided:  # spans part of a group: materialized at the full shape
                lines.append(f"{t} = {t}.expand(shape).contiguous()")
                continue
            lines.append(f"st = {t}.expand(shape).stride()")
            for g, (a, b) in zip(("so", "sr", "si"), groups, strict=True):
                # the step of the group's flat index: the stride of its innermost dim longer than 1
                lines.append(f"{t}_{g} = group_step(st, shape, {a}, {b - 1})")
        lines.extend(self.size_lines("shape"))
        for o in self.seg.outputs:
            if o in full_outs:
                shape = "shape"
            elif len(self.nodes[o].shape) == len(self.seg.base):
                shape = f"tuple(shape[:{d0}]) + {(1,) * (d1 - d0)!r} + tuple(shape[{d1}:])"
            else:
                shape = f"tuple(shape[:{d0}]) + tuple(shape[{d1}:])"
            lines.append(f"{o} = torch.empty({shape}, device={base_t}.device, dtype={self.dtype_expr(o)})")
        bi, br = self.genes["BLOCK_I"], self.genes["BLOCK_R"]
        lines.append(f"block_i = min({bi}, next_power_of_2(INNER))")
        if split > 1:
            dev = f"{base_t}.device"
            lines += [f"S = {split}", f"CHUNK = cdiv(cdiv(R, S), {br}) * {br}"]
            lines += [
                f"{r}_part = torch.empty((OUTER, S, INNER), device={dev}, dtype=torch.float32)" for r in reductions
            ]
            lines.append("grid = (OUTER * cdiv(INNER, block_i), S)")
            call = [*self.tensors, *full_outs, *(f"{r}_part" for r in reductions), *self.scalars, *self.sizes]
            call += ["R", "INNER", "CHUNK", "S", *strides]
            lines.append(f"{name}[grid]({', '.join(call)}, BLOCK_R={br}, BLOCK_I=block_i, {self.launch_opts()})")
            ccall = [*(f"{r}_part" for r in reductions), *red_outs, *self.scalars, *self.sizes, "INNER", "S"]
            lines.append(f"{comb_name}[(grid[0],)]({', '.join(ccall)}, BLOCK_I=block_i, num_warps=4)")
            names = [name, comb_name]
        else:
            lines.append("grid = (OUTER * cdiv(INNER, block_i),)")
            call = [a.removesuffix("_ptr") for a in self.kernel_params()] + ["R", "INNER", *strides]
            lines.append(f"{name}[grid]({', '.join(call)}, BLOCK_R={br}, BLOCK_I=block_i, {self.launch_opts()})")
            names = [name]
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        return Emitted(
            "\n".join(kernel), "\n".join(launcher), self.launcher, self.tensors, self.scalars, self.seg.outputs, names
        )


def emit_segment(graph: Graph, seg: Segment, genes: dict[str, Any], prefix: str, symbolic: set[str]) -> Emitted:
    from foundry.codegen.conv import ConvEmitter
    from foundry.codegen.gather import GatherEmitter, ScatterEmitter
    from foundry.codegen.matmul import MatmulEmitter
    from foundry.codegen.pool import PoolEmitter
    from foundry.codegen.scan import ScanEmitter
    from foundry.codegen.sort import SortEmitter

    emitter = {
        "pointwise": PointwiseEmitter,
        "row": RowEmitter,
        "full": FullEmitter,
        "col": ColEmitter,
        "matmul": MatmulEmitter,
        "conv": ConvEmitter,
        "pool": PoolEmitter,
        "scan": ScanEmitter,
        "gather": GatherEmitter,
        "scatter": ScatterEmitter,
        "sort": SortEmitter,
    }[seg.kind]
    return emitter(graph, seg, genes, prefix, symbolic).emit()


__all__ = ["Emitted", "emit_segment", "math", "torch", "Node"]
