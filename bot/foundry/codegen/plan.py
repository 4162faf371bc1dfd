"""Cut an IR graph into kernels ("segments"), each with one iteration space:

  pointwise   a flat walk over one output shape; inputs broadcast by index arithmetic
  row         reductions over the trailing dims of a base shape, with everything around them
              (softmax, norms, cross-entropy rows …) in one program per block of rows
  col         a reduction over middle dims of a base shape viewed as (outer, reduced, inner)
  full        reductions over every element (losses, global means): partials, then a combine
  matmul      (batched) matmul with the pointwise epilogue that follows it
  conv        N-d (transposed) convolution as an implicit GEMM or a direct loop, with its epilogue
  pool        N-d max / average pooling, one output element per lane, with its epilogue
  scan        running sums / products (cumsum, cumprod) along one dim, one program per block of rows (the
              scanned dim as a row, strided when it is not the last), with the elementwise ops before and
              after them; rows longer than a tile are scanned tile by tile with a running carry
  gather      values taken by an index tensor (index_select, embedding, x[idx], torch.gather: take nodes), one
              output element per lane, with the elementwise ops after them; sources and indices in memory
  scatter     values added at an index (scatter_add, index_add) with atomic adds, one source element per lane,
              into a copy of the base; alone in its kernel
  sort        a sort or selection along one dim (sort, argsort, topk, median, cummax, cummin): one program per
              block of rows, its values and indices; alone in its kernel, reading its input from memory

A value crosses a segment boundary only through memory (a segment output); host views (view,
transpose, …) run in the launcher on materialized tensors, and so do library calls (the hybrid policy's
fallback for ops no template expresses): their operands are written to memory, their results are tensors in
memory that later segments read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from foundry.codegen.ir import Graph, Node, UnsupportedError

SCALAR_LEAVES = frozenset({"const", "size"})
TENSOR_LEAVES = frozenset({"input", "param", "hostview"})


@dataclass
class Segment:
    index: int
    kind: str  # pointwise | row | col | full | matmul | conv | pool | scan | gather | scatter | sort
    base: tuple[int, ...]  # iteration space (the shape reductions run over, or the output shape)
    dims: tuple[int, ...] = ()  # reduced dims of the base (row, col, full)
    nodes: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    closed: bool = False
    base_of: str = ""  # a node with the base shape (what `size` nodes measure)
    alias: str = ""  # matmul: a reshape of the (M, N) result the epilogue continues on, e.g. (B, S, N)


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def right_align(shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
    return (1,) * (rank - len(shape)) + tuple(shape)


def broadcastable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    padded = right_align(shape, len(to))
    return all(s in (1, t) for s, t in zip(padded, to, strict=True))


def row_role(shape: tuple[int, ...], base: tuple[int, ...], dims: tuple[int, ...]) -> str | None:
    """How a value of `shape` sits in a row segment over `base` reducing trailing `dims`."""
    r, k = len(base), len(dims)
    outer, inner = base[: r - k], base[r - k :]
    if tuple(shape) == tuple(base):
        return "full"
    if len(shape) <= r:
        aligned = right_align(shape, r)
        if all(s == 1 for s in aligned[: r - k]) and aligned[r - k :] == inner and numel(shape) > 1:
            return "colparam"
    if tuple(shape) in (outer + (1,) * k, outer) and numel(shape) > 1:
        return "perrow"
    if numel(shape) == 1:
        return "scalar"
    return None


def scan_role(shape: tuple[int, ...], base: tuple[int, ...], dim: int) -> str | None:
    """How an operand of `shape` sits in a scan segment over `base` along `dim`: the full shape, a scalar, and
    along the last dim also a per-column vector or a per-row value (the row kernel's roles); else None."""
    if tuple(shape) == tuple(base):
        return "full"
    if numel(shape) == 1:
        return "scalar"
    if dim == len(base) - 1:
        return row_role(shape, base, (dim,))
    return None


def split_kind(base: tuple[int, ...], dims: tuple[int, ...]) -> str:
    r = len(base)
    if tuple(dims) == tuple(range(r)):
        return "full"
    if dims and tuple(dims) == tuple(range(r - len(dims), r)):
        return "row"
    if dims and tuple(dims) == tuple(range(dims[0], dims[0] + len(dims))):
        return "col"
    raise UnsupportedError("reduction", f"dims {list(dims)} of a rank-{r} tensor are not contiguous")


@dataclass(frozen=True)
class PlanOptions:
    """Fusion boundaries the search may move."""

    fuse_epilogue: bool = True  # elementwise ops after a matmul run in its epilogue
    merge_reductions: bool = True  # reductions of the same tensor share one pass / kernel
    # convolutions whose output channels fit one GEMM tile at every declared size (groups 1): a reduction
    # over the channels (and what follows it) can run in their epilogue (with fuse_epilogue)
    channel_convs: frozenset[str] = frozenset()


class Planner:
    def __init__(self, graph: Graph, options: PlanOptions | None = None) -> None:
        self.options = options or PlanOptions()
        self.graph = graph
        self.nodes = graph.nodes
        self.segments: list[Segment] = []
        self.seg_of: dict[str, Segment] = {}
        self.materialized: set[str] = {n.name for n in graph.nodes.values() if n.op in ("input", "param")}
        self.roles: dict[str, str] = {}  # node -> role inside its (row) segment

    def plan(self) -> list[Segment]:
        for node in self.graph.order():
            if node.op in SCALAR_LEAVES or node.op in ("input", "param", "gparam"):
                continue
            if node.op == "library":
                for arg in node.args:
                    self.materialize(arg)
                self.materialized.add(node.name)
                continue
            if node.op == "hostview":
                if self.reshapes_matmul(node):
                    seg = self.seg_of[node.args[0]]
                    seg.alias, seg.base = node.name, node.shape
                    self.join(seg, node)
                    continue
                self.materialize(node.args[0])
                self.materialized.add(node.name)
            elif node.op == "pool" and (sibling := self.sibling_pool(node)) is not None:
                self.join(sibling, node)  # another window over the same input: the same lanes compute both
            elif node.op == "pool" and self.pool_prologue(node):
                seg = self.seg_of[node.args[0]]
                seg.kind, seg.base, seg.base_of = "pool", node.shape, node.name
                self.join(seg, node)
            elif node.op in ("matmul", "conv", "pool"):
                for arg in node.args:
                    self.materialize(arg)
                self.new_segment(node.op, node, node.shape)
            elif node.op == "gather":
                self.place_gather(node)
            elif node.kind == "scan":
                self.place_scan(node)
            elif node.op == "take":
                self.place_take(node)
            elif node.op == "scatter":  # atomic adds: the output is complete only when the kernel is
                for arg in node.args:
                    self.materialize(arg)
                self.new_segment("scatter", node, node.shape)
                self.materialize(node.name)
            elif node.kind == "sort":  # its values and indices (the sort_index node after it) in one kernel
                self.materialize(node.args[0])
                src = node.args[0]
                self.new_segment("sort", node, self.nodes[src].shape, (node.attrs["dim"],), base_of=src).closed = True
            elif node.op == "sort_index":
                self.join(self.seg_of[node.args[0]], node)
            elif node.op == "flip":
                raise UnsupportedError("aten.flip.default", "a flip is lowered only around a scan along its dim")
            else:
                self.place(node)
        for out in self.graph.outputs:
            node = self.nodes[out]
            if node.op in ("input", "param"):
                raise UnsupportedError("output", "the operator returns an input or parameter unchanged")
            if node.op == "hostview" and self.nodes[self.root(out)].op in ("input", "param"):
                raise UnsupportedError("output", "the operator returns a view of an input")
            if node.op in SCALAR_LEAVES:
                raise UnsupportedError("output", "the operator returns a constant")
        self.mark_outputs()
        return self.segments

    def root(self, name: str) -> str:
        while self.nodes[name].op == "hostview":
            name = self.nodes[name].args[0]
        return name

    # -- placement ---------------------------------------------------------------------------------

    def materialize(self, name: str) -> None:
        """Write `name` to memory; its segment takes no more nodes (so launch order follows the graph)."""
        if name in self.materialized or self.nodes[name].op in SCALAR_LEAVES:
            return
        if self.nodes[name].op == "gparam":
            raise UnsupportedError("group norm", "its per-channel parameter must stay in the norm kernel")
        seg = self.seg_of[name]
        self.materialized.add(name)
        if name not in seg.outputs:
            seg.outputs.append(name)
        seg.closed = True

    def new_segment(
        self, kind: str, node: Node, base: tuple[int, ...], dims: tuple[int, ...] = (), base_of: str = ""
    ) -> Segment:
        seg = Segment(len(self.segments), kind, tuple(base), tuple(dims), base_of=base_of or node.name)
        self.segments.append(seg)
        self.join(seg, node)
        return seg

    def join(self, seg: Segment, node: Node) -> None:
        seg.nodes.append(node.name)
        self.seg_of[node.name] = seg

    def open_producers(self, node: Node) -> list[Segment]:
        found: list[Segment] = []
        for arg in node.args:
            seg = self.seg_of.get(arg)
            if seg is not None and arg not in self.materialized and not seg.closed and seg not in found:
                found.append(seg)
        return found

    def place(self, node: Node) -> None:
        producers = sorted(self.open_producers(node), key=lambda s: -numel(s.base))
        if not producers and node.kind == "reduce" and self.options.merge_reductions:
            # a reduction of a tensor in memory: share a pass with open reductions over the same rows
            producers = [s for s in reversed(self.segments) if not s.closed and s.kind != "pointwise"]
        elif not producers and node.kind == "pointwise" and self.options.merge_reductions:
            # elementwise work on tensors in memory that an open reduction kernel can do on the side:
            # per-row values in a row kernel, or the input of a whole-tensor reduction
            producers = [
                s
                for s in reversed(self.segments)
                if not s.closed
                and (
                    (s.kind == "pointwise" and s.base == node.shape)
                    or (s.kind == "row" and row_role(node.shape, s.base, s.dims) in ("perrow", "scalar"))
                    or (s.kind == "full" and node.shape == s.base and self.feeds_full_reduction(node, s))
                )
            ]
        for seg in producers:
            others = {a for a in node.args if self.seg_of.get(a) not in (None, seg)}
            if self.absorbs(seg, node, others):
                for other in producers:
                    if other is not seg:
                        self.materialize_args(node, other)
                self.convert_if_needed(seg, node)
                self.join(seg, node)
                return
        for seg in producers:
            self.materialize_args(node, seg)
        for arg in node.args:
            self.materialize(arg)
        self.start(node)

    def feeds_full_reduction(self, node: Node, seg: Segment) -> bool:
        users = self.graph.users()[node.name]
        return bool(users) and all(
            (self.nodes[u].kind == "reduce" and self.nodes[u].attrs["dims"] == seg.dims)
            or (self.nodes[u].kind == "pointwise" and self.nodes[u].shape == seg.base)
            for u in users
        )

    def pool_prologue(self, node: Node) -> bool:
        """Can the open pointwise segment producing a pool's input run inside the pool kernel, per tap?
        Only when nothing else reads its values and its operands broadcast against the pooled shape."""
        src = node.args[0]
        seg = self.seg_of.get(src)
        if (
            not self.options.fuse_epilogue
            or seg is None
            or seg.kind != "pointwise"
            or seg.closed
            or seg.outputs
            or src in self.materialized
            or seg.nodes[-1] != src
            or seg.base != self.nodes[src].shape
        ):
            return False
        users = self.graph.users()
        members = set(seg.nodes)
        for name in seg.nodes:
            if name in self.graph.outputs or any(u not in members and u != node.name for u in users[name]):
                return False
            for arg in self.nodes[name].args:
                a = self.nodes[arg]
                if arg in members or a.op == "const":
                    continue
                if a.op == "size" or arg not in self.materialized or not broadcastable(a.shape, seg.base):
                    return False
        return True

    def sibling_pool(self, node: Node) -> Segment | None:
        """An open pool segment that pools the same tensor in memory to the same output shape (max and
        average pooling of one input, say): `node` can run in its lanes, reading the input once."""
        src = node.args[0]
        if not self.options.fuse_epilogue or src not in self.materialized:
            return None
        for seg in reversed(self.segments):
            head = self.nodes[seg.nodes[0]]
            if (
                seg.kind == "pool"
                and not seg.closed
                and head.op == "pool"
                and head.args[0] == src
                and seg.base == node.shape
            ):
                return seg
        return None

    def reshapes_matmul(self, node: Node) -> bool:
        """A view (B*S, N) → (B, S, N) of an open matmul's result: the epilogue can go on in 2-D."""
        src = node.args[0]
        seg = self.seg_of.get(src)
        return (
            self.options.fuse_epilogue
            and seg is not None
            and seg.kind == "matmul"
            and not seg.closed
            and not seg.alias
            and src not in self.materialized
            and seg.nodes[-1] == src
            and node.attrs.get("view") in ("view", "reshape", "_unsafe_view")
            and len(self.nodes[src].shape) == 2
            and node.shape[-1:] == self.nodes[src].shape[-1:]
            and numel(node.shape) == numel(self.nodes[src].shape)
        )

    def epilogue_operand(self, seg: Segment, name: str) -> bool:
        node = self.nodes[name]
        if name not in self.materialized or not broadcastable(node.shape, seg.base):
            return False
        if not seg.alias:
            return True
        # after a reshape the epilogue runs on (M, N): operands are whole, per-column, or scalars
        return node.shape == seg.base or numel(node.shape) == 1 or numel(node.shape) == seg.base[-1]

    def materialize_args(self, node: Node, seg: Segment) -> None:
        for arg in node.args:
            if self.seg_of.get(arg) is seg:
                self.materialize(arg)

    def start(self, node: Node) -> None:
        if node.kind == "reduce":
            src = self.nodes[node.args[0]]
            dims = node.attrs["dims"]
            self.new_segment(split_kind(src.shape, dims), node, src.shape, dims, base_of=src.name)
        else:
            self.new_segment("pointwise", node, node.shape)

    def place_gather(self, node: Node) -> None:
        logits, target = node.args
        self.materialize(target)
        seg = self.seg_of.get(logits)
        if seg is not None and logits not in self.materialized and not seg.closed:
            if seg.kind == "pointwise" and seg.base == self.nodes[logits].shape:
                seg.kind, seg.dims, seg.base_of = "row", (1,), logits
            if seg.kind == "row" and seg.dims == (1,) and seg.base == self.nodes[logits].shape:
                self.join(seg, node)
                return
            self.materialize(logits)
        shape = self.nodes[logits].shape
        for seg in reversed(self.segments):
            if not seg.closed and seg.kind == "row" and seg.dims == (1,) and seg.base == shape:
                self.join(seg, node)  # the raw logits are in memory: pick alongside the open row pass
                return
        self.new_segment("row", node, shape, (1,), base_of=logits)

    def place_scan(self, node: Node) -> None:
        """A scan continues the open segment that computes its operand when that one can become (or is) a
        scan segment over the same shape and dim: an elementwise prologue whose operands the scan kernel reads
        (scan_role), or earlier scans with their elementwise ops. Otherwise it starts a scan segment on its
        operand in memory."""
        src = node.args[0]
        dim = node.attrs["dim"]
        seg = self.seg_of.get(src)
        if seg is not None and self.in_segment(seg, src) and not seg.closed and seg.base == node.shape:
            reverse = node.attrs["reverse"]
            same_way = all(self.nodes[n].attrs["reverse"] == reverse for n in seg.nodes if self.nodes[n].kind == "scan")
            if seg.kind == "scan" and seg.dims == (dim,) and same_way:  # a kernel walks its tiles one way
                self.join(seg, node)
                return
            if seg.kind == "pointwise" and self.scan_prologue(seg, dim):
                seg.kind, seg.dims, seg.base_of = "scan", (dim,), src
                self.join(seg, node)
                return
        self.materialize(src)
        self.new_segment("scan", node, node.shape, (dim,), base_of=src)

    def place_take(self, node: Node) -> None:
        """A take reads its source and index from memory. It joins an open elementwise or gather segment over
        its shape (the same lanes pick its values: token and position embeddings added, say), else it starts a
        gather segment; the elementwise ops after it join that segment as they join a pointwise one. (A kernel
        launches at its last node, so after whatever writes the take's operands.)"""
        for arg in node.args:
            self.materialize(arg)
        for seg in reversed(self.segments):
            if not seg.closed and seg.kind in ("pointwise", "gather") and seg.base == node.shape:
                seg.kind = "gather"
                self.join(seg, node)
                return
        self.new_segment("gather", node, node.shape)

    def scan_prologue(self, seg: Segment, dim: int) -> bool:
        members = set(seg.nodes)
        for name in seg.nodes:
            if self.nodes[name].shape != seg.base:
                return False
            for arg in self.nodes[name].args:
                a = self.nodes[arg]
                if arg in members or a.op in SCALAR_LEAVES:
                    continue
                if a.op == "size" or scan_role(a.shape, seg.base, dim) is None:
                    return False
        return True

    def in_segment(self, seg: Segment, arg: str) -> bool:
        return self.seg_of.get(arg) is seg and arg not in self.materialized

    def absorbs(self, seg: Segment, node: Node, others: set[str] | None = None) -> bool:
        """Can `seg` compute `node`, with the operands in `others` written to memory first?"""
        saved = set(self.materialized)
        self.materialized |= others or set()
        try:
            return self.absorbs_now(seg, node)
        finally:
            self.materialized = saved

    def absorbs_now(self, seg: Segment, node: Node) -> bool:
        if seg.kind == "gather":  # a pointwise segment whose lanes also take values by index
            return (
                node.kind == "pointwise"
                and node.shape == seg.base
                and all(self.in_segment(seg, a) or a in self.materialized or self.is_scalar(a) for a in node.args)
                and all(self.fits_flat(a, seg.base) for a in node.args)
            )
        if seg.kind == "pointwise":
            if node.kind == "pointwise":
                return (
                    node.shape == seg.base
                    and all(self.in_segment(seg, a) or a in self.materialized or self.is_scalar(a) for a in node.args)
                    and all(self.fits_flat(a, seg.base) for a in node.args)
                )
            if node.kind == "reduce":
                src = self.nodes[node.args[0]]
                return src.shape == seg.base and self.in_segment(seg, src.name)
            return False
        if seg.kind == "row":
            if node.kind == "reduce":
                src = node.args[0]
                return (
                    self.nodes[src].shape == seg.base
                    and node.attrs["dims"] == seg.dims
                    and (self.in_segment(seg, src) or src in self.materialized)
                )
            if node.kind == "pointwise":
                return row_role(node.shape, seg.base, seg.dims) is not None and all(
                    self.in_segment(seg, a)
                    or self.nodes[a].op in SCALAR_LEAVES
                    or self.nodes[a].op == "gparam"
                    or (a in self.materialized and row_role(self.nodes[a].shape, seg.base, seg.dims) is not None)
                    for a in node.args
                )
            return False
        if seg.kind in ("col", "full"):
            reduced = {n for n in seg.nodes if self.nodes[n].kind == "reduce"}
            if node.kind == "reduce":
                src = node.args[0]
                return (
                    self.nodes[src].shape == seg.base
                    and node.attrs["dims"] == seg.dims
                    and (self.in_segment(seg, src) or src in self.materialized)
                    and not self.depends_on(src, reduced)
                )
            if node.kind == "pointwise":
                if node.shape == seg.base:
                    return not any(self.depends_on(a, reduced) for a in node.args) and all(
                        self.fits_flat(a, seg.base)
                        if seg.kind == "full"
                        else (
                            self.in_segment(seg, a)
                            or self.is_scalar(a)
                            or (a in self.materialized and self.nodes[a].shape == seg.base)
                        )
                        for a in node.args
                    )
                return (
                    numel(node.shape) == numel(self.nodes[next(iter(reduced))].shape)
                    if reduced
                    and all(
                        (self.in_segment(seg, a) and self.depends_on(a, reduced)) or self.is_scalar(a)
                        for a in node.args
                    )
                    else False
                )
            return False
        if seg.kind == "scan":
            return (
                node.kind == "pointwise"
                and node.shape == seg.base
                and all(
                    self.in_segment(seg, a)
                    or self.nodes[a].op in SCALAR_LEAVES
                    or (a in self.materialized and scan_role(self.nodes[a].shape, seg.base, seg.dims[0]) is not None)
                    for a in node.args
                )
            )
        if seg.kind == "conv" and self.channel_epilogue(seg, node) is not None:
            return bool(self.channel_epilogue(seg, node))
        if seg.kind in ("matmul", "conv", "pool"):
            return (
                self.options.fuse_epilogue
                and node.kind == "pointwise"
                and node.shape == seg.base
                and all(
                    self.in_segment(seg, a) or self.is_scalar(a) or self.epilogue_operand(seg, a) for a in node.args
                )
            )
        return False

    def channel_epilogue(self, seg: Segment, node: Node) -> bool | None:
        """For a conv whose channels fit one tile: can its epilogue take `node` as part of a reduction over
        the channels (sum / max / min over dim 1 of a value of the conv's shape; after one, elementwise ops
        on the reduced values, or on the full shape with reduced values kept as (N, 1, ...))? None: `node`
        is none of that, the ordinary epilogue rule decides."""
        if not self.options.fuse_epilogue or seg.nodes[0] not in self.options.channel_convs:
            return None
        reduced = {n for n in seg.nodes if self.nodes[n].kind == "reduce"}
        kept = (seg.base[0], 1, *seg.base[2:])
        if node.kind == "reduce":
            src = node.args[0]
            return (
                node.op in ("sum", "max", "min")
                and node.attrs["dims"] == (1,)
                and self.nodes[src].shape == seg.base
                and self.in_segment(seg, src)
            )
        if node.kind != "pointwise" or not reduced:
            return None
        if node.shape == seg.base:
            # reduced values broadcast over the channels only as (N, 1, ...); everything else as before
            return all(
                self.nodes[a].shape in (seg.base, kept)
                if self.in_segment(seg, a)
                else self.is_scalar(a) or self.epilogue_operand(seg, a)
                for a in node.args
            )
        return numel(node.shape) * seg.base[1] == numel(seg.base) and all(
            (self.in_segment(seg, a) and numel(self.nodes[a].shape) == numel(node.shape)) or self.is_scalar(a)
            for a in node.args
        )

    def convert_if_needed(self, seg: Segment, node: Node) -> None:
        if seg.kind == "pointwise" and node.kind == "reduce":
            src = self.nodes[node.args[0]]
            seg.kind = split_kind(src.shape, node.attrs["dims"])
            seg.dims = node.attrs["dims"]
            seg.base_of = src.name

    def fits_flat(self, arg: str, base: tuple[int, ...]) -> bool:
        node = self.nodes[arg]
        if node.op in SCALAR_LEAVES:
            return True
        return broadcastable(node.shape, base)

    def is_scalar(self, arg: str) -> bool:
        node = self.nodes[arg]
        return node.op in SCALAR_LEAVES or (arg in self.materialized and numel(node.shape) == 1)

    def depends_on(self, name: str, targets: set[str]) -> bool:
        todo, seen = [name], set()
        while todo:
            cur = todo.pop()
            if cur in targets:
                return True
            if cur in seen or cur in self.materialized:
                continue
            seen.add(cur)
            todo.extend(self.nodes[cur].args)
        return False

    def mark_outputs(self) -> None:
        users = self.graph.users()
        outputs = set(self.graph.outputs)
        for seg in self.segments:
            members = set(seg.nodes)
            for name in seg.nodes:
                external = any(u not in members for u in users[name])
                if (external or name in outputs) and name not in seg.outputs:
                    seg.outputs.append(name)
            seg.outputs.sort(key=seg.nodes.index)


def prune(graph: Graph) -> None:
    """Drop nodes no output depends on."""
    live: set[str] = set()
    todo = list(graph.outputs)
    while todo:
        name = todo.pop()
        if name in live:
            continue
        live.add(name)
        todo.extend(graph.nodes[name].args)
        todo.extend(a for a in graph.nodes[name].attrs.get("params", ()) if isinstance(a, str))
        if graph.nodes[name].op == "library":  # one call makes all its results: they stay together
            group = graph.nodes[name].attrs["group"]
            todo.extend(n for n, node in graph.nodes.items() if node.op == "library" and node.attrs["group"] == group)
    for name in [n for n in graph.nodes if n not in live and graph.nodes[n].op != "input"]:
        del graph.nodes[name]


def push_gathers(graph: Graph) -> None:
    """gather(a - b, t) with b per-row → gather(a, t) - b: the picked logit of a log-softmax then needs
    only the raw row, so cross-entropy reads its logits in one pass."""
    changed = True
    while changed:
        changed = False
        order = list(graph.nodes.values())
        for i, node in enumerate(order):
            if node.op != "gather":
                continue
            src = graph.nodes[node.args[0]]
            if src.op not in ("sub", "add") or len(src.args) != 2:
                continue
            a, b = (graph.nodes[x] for x in src.args)
            rows = src.shape[:1]
            if a.shape != src.shape or b.shape not in (rows + (1,), rows):
                continue
            inner = Node(f"{node.name}_raw", "gather", (a.name, node.args[1]), node.shape, node.dtype)
            outer = Node(node.name, src.op, (inner.name, b.name), node.shape, node.dtype)
            order[i : i + 1] = [inner, outer]
            graph.nodes.clear()
            graph.nodes.update({n.name: n for n in order})
            changed = True
            break


def plan(graph: Graph, options: PlanOptions | None = None) -> list[Segment]:
    push_gathers(graph)
    prune(graph)
    return Planner(graph, options).plan()
