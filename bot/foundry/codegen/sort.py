"""Sorts and selections along one dim, values and indices: sort / argsort, topk, median, cummax / cummin.

The dim is a row, as in the scan kernel: one program per BLOCK_M rows (TILE // BLOCK_N of them: short rows share a
program), the input viewed as (outer, N, inner) with rows the outer x inner positions (a row's elements INNER
apart). Values are loaded as fp32 (fp16 and bf16 convert exactly, so they compare as in their own dtype) and stored
in the output's dtype; indices are int64.

Sort, topk and median order packed int64 keys: the value's bits as an integer that orders like the value (the low
31 bits flipped where the sign is set; -0.0 read as 0.0 and every NaN as one NaN, larger than +inf, as torch orders
them) in the high half, the lane's index in the low half, so one sort of the keys (_sort_rows, a bitonic network),
largest first, orders values and breaks ties at once: tied values come lowest index first (stable=True's order)
both ways (the index is stored reversed for a largest-first order, and the whole key inverted for a smallest-first
one).
Lanes past the row's end hold a key below every value's. Values and indices are unpacked from the sorted keys.

  sort    the whole row in one tile (BLOCK_N = next_power_of_2(N), up to SORT_MAX_N): the keys sorted
  median  the sorted row's key at (N - 1) // 2, ascending; a row holding NaN gives NaN at its first NaN
  topk    the row in tiles of BLOCK_N (at least K = next_power_of_2(k)): each tile's K best keys joined with the
          running K best and reduced to K again, so rows of any length; the first k are stored
  cummax  the row in tiles with a running (value, index) carry: tl.associative_scan of (value, index) pairs whose
  cummin  combine takes the later pair where it is NaN, or not smaller (larger) while the earlier is not NaN (torch's)

torch's own order of tied values is not stable=True's everywhere: its default sort on CPU is std::sort (stable up
to 16 elements a row, not past), its topk nth_element's. Where a trial holds ties, the indices of those differ (the
values never do); the hybrid policy keeps torch's call for them (capture.Lowerer.tie_order).
"""

from __future__ import annotations

from typing import Any

from foundry.codegen.ir import SORT_MAX_N, UnsupportedError
from foundry.codegen.kernels import Emitted, SegmentEmitter, indent

# A key below every value's (the smallest key a value packs to is about -9.2054e18): lanes past the row's end.
NO_KEY = "-9223372036854775807"
PACK = """@triton.jit
def _sort_keys(x, cols, DESCENDING: tl.constexpr):
    x = tl.where(x != x, float("nan"), tl.where(x == 0.0, 0.0, x))
    bits = x.to(tl.int32, bitcast=True)
    key = (bits ^ ((bits >> 31) & 0x7FFFFFFF)).to(tl.int64) << 32
    if DESCENDING:
        return key | (4294967295 - cols.to(tl.int64))
    return ~(key | cols.to(tl.int64))"""
UNPACK = """@triton.jit
def _sort_unpack(packed, DESCENDING: tl.constexpr):
    if not DESCENDING:
        packed = ~packed
    key = (packed >> 32).to(tl.int32)
    low = packed & 4294967295
    value = (key ^ ((key >> 31) & 0x7FFFFFFF)).to(tl.float32, bitcast=True)
    if DESCENDING:
        return value, 4294967295 - low
    return value, low"""
# A bitonic network over the last axis, largest first, written with reshapes and sums: at distance 2**t a lane's
# partner (its index with bit t flipped) is the pair's sum less its own key (int64 sums wrap, and so does the
# difference, exactly). A stage s sorts blocks of 2**s lanes, down where bit s of the lane is 0 (all at the last).
NETWORK = """@triton.jit
def _sort_rows(x, LOG_N: tl.constexpr):
    rows: tl.constexpr = x.shape[0]
    n: tl.constexpr = x.shape[1]
    lanes = tl.arange(0, n)[None, :]
    for s in tl.static_range(1, LOG_N + 1):
        down = ((lanes >> s) & 1) == 0
        for u in tl.static_range(s):  # distance 2 ** (s - 1 - u)
            pairs = tl.reshape(x, [rows, n >> (s - u), 2, 1 << (s - 1 - u)])
            partner = tl.reshape(tl.sum(pairs, axis=2, keep_dims=True) - pairs, [rows, n])
            upper = ((lanes >> (s - 1 - u)) & 1) == 1
            x = tl.where(down != upper, tl.maximum(x, partner), tl.minimum(x, partner))
    return x"""
# (value, index) pairs of one row: the later one (b) where it is NaN, or where it is not past the earlier one (a)
# while that is not NaN; as torch's cummax / cummin step
RUNNING = """@triton.jit
def _{op}_combine(a, a_at, b, b_at):
    take = (b != b) | ((a == a) & (b {cmp} a))
    return tl.where(take, b, a), tl.where(take, b_at, a_at)"""


class SortEmitter(SegmentEmitter):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.values = self.seg.nodes[0]
        node = self.nodes[self.values]
        self.op = node.op
        self.src = node.args[0]
        self.dim = self.seg.dims[0]
        self.descending = bool(node.attrs["descending"])
        self.indices = next((n for n in self.seg.nodes[1:] if self.nodes[n].op == "sort_index"), "")
        if len(self.seg.nodes) > (2 if self.indices else 1):
            raise UnsupportedError(self.op, "a sort kernel computes one sort and its indices")

    # -- kernel bodies ---------------------------------------------------------------------------------

    def load(self, cols: str, other: str = "0.0") -> list[str]:
        return [
            f"mask = row_mask & ({cols} < N)",
            f"offs = row_off + {cols}.to(tl.int64) * INNER",
            f"{self.src} = {self.load_cast(f'tl.load({self.src}_ptr + offs, mask=mask, other={other})', self.src)}",
        ]

    def stores(self, at: str, mask: str, value: str, index: str) -> list[str]:
        """Stores of the segment's outputs: the values from `value`, the indices from `index`."""
        found = []
        for o in self.seg.outputs:
            what = value if o == self.values else index
            found.append(f"tl.store({o}_ptr + {at}, {what}.to({o}_ptr.dtype.element_ty), mask={mask})")
        return found

    def sort_body(self) -> list[str]:
        """The whole row in one tile: the keys sorted; the row (sort) or the key at (N - 1) // 2 (median)."""
        desc = "True" if self.descending else "False"
        body = self.load("lanes") + [
            f"packed = tl.where(mask, _sort_keys({self.src}, lanes, {desc}), {NO_KEY})",
            "ordered = _sort_rows(packed, LOG_N)",
        ]
        if self.op == "sort":
            body.append(f"best, best_at = _sort_unpack(ordered, {desc})")
            return body + self.stores("offs", "mask", "best", "best_at")
        body += [
            f"ordered = tl.max(tl.where(lanes == (N - 1) // 2, ordered, {NO_KEY}), axis=1, keep_dims=True)",
            "best, best_at = _sort_unpack(ordered, False)",
            "# a row holding NaN: NaN at its first NaN (torch's median)",
            f"nan_at = tl.min(tl.where(mask & ({self.src} != {self.src}), lanes, N), axis=1, keep_dims=True)",
            "best = tl.where(nan_at < N, float('nan'), best)",
            "best_at = tl.where(nan_at < N, nan_at.to(tl.int64), best_at)",
        ]
        return body + self.stores("rows", "row_mask", "best", "best_at")

    def topk_body(self) -> list[str]:
        """Tiles of BLOCK_N: each one's K best keys joined with the running K and reduced to K; the first k stored."""
        desc = "True" if self.descending else "False"
        loop = self.load("cols") + [
            f"packed = tl.where(mask, _sort_keys({self.src}, cols, {desc}), {NO_KEY})",
            "# the tile sorted: its first K keys are the largest of each K-chunk's column",
            "packed = tl.max(tl.reshape(_sort_rows(packed, LOG_N), [BLOCK_M, BLOCK_N // K, K]), axis=1)",
            "packed = _sort_rows(tl.reshape(tl.join(best, packed), [BLOCK_M, 2 * K]), LOG_K + 1)",
            "best = tl.max(tl.reshape(packed, [BLOCK_M, 2, K]), axis=1)",
        ]
        k = self.var(self.nodes[self.values].args[1])
        return [
            f"best = tl.full([BLOCK_M, K], {NO_KEY}, dtype=tl.int64)",
            "for start in range(0, N, BLOCK_N):",
            *indent(["cols = start + lanes", *loop], 4),
            "outc = tl.arange(0, K)[None, :]",
            f"best, best_at = _sort_unpack(best, {desc})",
            *self.stores(
                f"(rows // INNER).to(tl.int64) * {k} * INNER + rows % INNER + outc * INNER",
                f"row_mask & (outc < {k})",
                "best",
                "best_at",
            ),
        ]

    def running_body(self) -> list[str]:
        """Tiles of BLOCK_N with a running (value, index) carry: each tile scanned, then combined with the carry."""
        combine = f"_{self.op}_combine"
        start = "-float('inf')" if self.op == "cummax" else "float('inf')"
        # lanes past the row's end come after every valid one: the scan never carries them back
        loop = self.load("cols") + [
            "at = tl.broadcast_to(cols.to(tl.int64), [BLOCK_M, BLOCK_N])",
            f"best, best_at = tl.associative_scan(({self.src}, at), 1, {combine})",
            f"best, best_at = {combine}(carry, carry_at, best, best_at)",
            *self.stores("offs", "mask", "best", "best_at"),
            "carry = tl.sum(tl.where(lanes == BLOCK_N - 1, best, 0.0), axis=1, keep_dims=True)",
            "carry_at = tl.sum(tl.where(lanes == BLOCK_N - 1, best_at, 0), axis=1, keep_dims=True)",
        ]
        return [
            f"carry = tl.full([BLOCK_M, 1], {start}, dtype=tl.float32)",
            "carry_at = tl.zeros([BLOCK_M, 1], dtype=tl.int64)",
            "for start in range(0, N, BLOCK_N):",
            *indent(["cols = start + lanes", *loop], 4),
        ]

    # -- kernel and launcher ----------------------------------------------------------------------------

    def emit(self) -> Emitted:
        name = f"_{self.prefix}_sort_kernel"
        extra = {"topk": ["K: tl.constexpr", "LOG_K: tl.constexpr"], "sort": [], "median": []}.get(self.op, [])
        extra += ["LOG_N: tl.constexpr"] if self.op in ("sort", "median", "topk") else []
        params = self.kernel_params() + ["M", "N", "INNER", *extra, "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr"]
        body = [
            "pid = tl.program_id(0)",
            "rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]",
            "row_mask = rows < M",
            "row_off = (rows // INNER).to(tl.int64) * N * INNER + rows % INNER",
            "lanes = tl.arange(0, BLOCK_N)[None, :]",
        ]
        if self.op in ("sort", "median"):
            body += self.sort_body()
            helpers = [PACK, NETWORK, UNPACK]
        elif self.op == "topk":
            body += self.topk_body()
            helpers = [PACK, NETWORK, UNPACK]
        else:
            body += self.running_body()
            helpers = [RUNNING.format(op=self.op, cmp=">=" if self.op == "cummax" else "<=")]
        kernel = ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

        d, src = self.dim, self.src
        lines = [f"{src} = {src}.contiguous()", f"shape = {src}.shape", f"N = shape[{d}]"]
        lines += [f"INNER = math.prod(shape[{d + 1}:])", "M = math.prod(shape) // max(N, 1)"]
        tile, block_n = self.genes["TILE"], self.genes["BLOCK_N"]
        keywords = "K=K, LOG_K=K.bit_length() - 1, " if self.op == "topk" else ""
        if self.op in ("sort", "median"):
            lines += [
                f"if N > {SORT_MAX_N}:",
                f'    raise ValueError(f"rows of {{N}} elements: a sort holds at most {SORT_MAX_N} (one tile)")',
                "block_n = next_power_of_2(max(N, 1))",
            ]
        elif self.op == "topk":
            k = self.var(self.nodes[self.values].args[1])
            lines += [
                f"if not 0 <= {k} <= N:",
                f'    raise ValueError(f"topk: k={{{k}}} out of range for rows of {{N}} elements")',
                f"K = next_power_of_2(max({k}, 1))",
                f"block_n = max(K, min(next_power_of_2(max(N, 1)), {block_n}))",
            ]
        else:
            lines.append(f"block_n = min(next_power_of_2(max(N, 1)), {block_n})")
        lines.append(f"block_m = min(max(1, {tile} // block_n), next_power_of_2(max(M, 1)))  # rows per program")
        keywords += "BLOCK_M=block_m, BLOCK_N=block_n"
        if self.op in ("sort", "median", "topk"):
            keywords += ", LOG_N=block_n.bit_length() - 1"
        if self.op == "median":
            lines += ["if N == 0:", '    raise ValueError("median of an empty dim")']
        for o in self.seg.outputs:
            shape = self.out_shape(o)
            dtype = "torch.int64" if o == self.indices else self.dtype_expr(o)
            lines.append(f"{o} = torch.empty({shape}, device={src}.device, dtype={dtype})")
        call = [a.removesuffix("_ptr") for a in self.kernel_params()] + ["M", "N", "INNER"]
        lines.append("if M > 0 and N > 0:")
        lines.append(f"    {name}[(cdiv(M, block_m),)]({', '.join(call)}, {keywords}, {self.launch_opts()})")
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        return Emitted(
            "\n\n\n".join(["\n".join(kernel), *helpers]),
            "\n".join(launcher),
            self.launcher,
            self.tensors,
            self.scalars,
            self.seg.outputs,
            [name],
        )

    def out_shape(self, o: str) -> str:
        """The output's shape at run time: the input's (sort, cummax), k along the dim (topk), the dim dropped or
        kept as 1 (median)."""
        d = self.dim
        if self.op == "topk":
            return f"(*shape[:{d}], {self.var(self.nodes[self.values].args[1])}, *shape[{d + 1}:])"
        if self.op == "median":
            rank = len(self.seg.base)
            kept = len(self.nodes[o].shape) == rank
            return f"(*shape[:{d}], {'1, ' if kept else ''}*shape[{d + 1}:])"
        return "shape"
