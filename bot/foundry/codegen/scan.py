"""Running sums and products (cumsum, cumprod) along one dim, with the elementwise ops before and after them.

The scanned dim is a row: one program per BLOCK_M rows, the base viewed as (outer, N, inner) with rows the
outer x inner positions (a row's elements INNER apart; INNER = 1 along the last dim, where the row kernel's
per-column and per-row operands are read too). Each row is walked in tiles of BLOCK_N columns (one tile when
the row fits, BLOCK_N = next_power_of_2(N) up to the gene): a tile's scan is `tl.cumsum` / `tl.cumprod` over
the registers, combined with the running carry of the tiles before it (the value at the tile's last column
becomes the next carry). A reverse scan (flip, cumsum, flip) walks the tiles from the end with the scan
reversed. Loads are fp32 (fp16/bf16 inputs accumulate in fp32, as torch does for cumsum); results are cast
to their dtype when stored. Lanes past the row's end scan the identity (0 for a sum, 1 for a product).
"""

from __future__ import annotations

from typing import Any

from foundry.codegen.ir import UnsupportedError
from foundry.codegen.kernels import Emitted, SegmentEmitter, indent
from foundry.codegen.plan import SCALAR_LEAVES, scan_role

SCAN_FN = {"cumsum": ("tl.cumsum", "+", "0"), "cumprod": ("tl.cumprod", "*", "1")}
# log(exp(a) + exp(b)) from the larger one (an infinite larger one as it is, NaN kept): logcumsumexp's
# combine in tl.associative_scan and across tiles
LOGADDEXP = """@triton.jit
def _logaddexp(a, b):
    hi = tl.where(a > b, a, b)
    lo = tl.where(a > b, b, a)
    out = tl.where(tl.abs(hi) == float("inf"), hi, hi + tl.log(1.0 + tl.exp(lo - hi)))
    return tl.where(lo != lo, lo, out)"""


class ScanEmitter(SegmentEmitter):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.dim = self.seg.dims[0]
        self.roles: dict[str, str] = {}
        for t in self.tensors:
            role = scan_role(self.nodes[t].shape, self.seg.base, self.dim)
            if role is None:
                shape, base = list(self.nodes[t].shape), list(self.seg.base)
                raise UnsupportedError(self.nodes[t].op, f"operand of shape {shape} in a scan over {base}")
            self.roles[t] = role
        self.full_inputs = [t for t in self.tensors if self.roles[t] == "full"]
        if not self.full_inputs:
            raise UnsupportedError("scan", "no input has the full shape of the scanned tensor")
        scans = [self.nodes[n] for n in self.seg.nodes if self.nodes[n].kind == "scan"]
        directions = {n.attrs["reverse"] for n in scans}
        if len(directions) > 1:
            raise UnsupportedError("aten.flip.default", "forward and reverse scans in one kernel")
        self.reverse = directions == {True}
        for o in self.seg.outputs:
            if self.nodes[o].shape != self.seg.base:
                raise UnsupportedError(self.nodes[o].op, "a scan kernel stores only values of the scanned shape")

    def load(self, t: str) -> str:
        role = self.roles[t]
        if role == "full":
            return self.load_cast(f"tl.load({t}_ptr + offs, mask=mask, other=0.0)", t)
        if role == "colparam":
            return self.load_cast(f"tl.load({t}_ptr + cols, mask=cols < N, other=0.0)", t)
        if role == "perrow":
            return self.load_cast(f"tl.load({t}_ptr + rows, mask=row_mask, other=0)", t)
        return self.load_cast(f"tl.load({t}_ptr)", t)

    def scan_lines(self, n: str) -> list[str]:
        node = self.nodes[n]
        edge = "0" if self.reverse else "BLOCK_N - 1"
        reverse = ", reverse=True" if self.reverse else ""
        if node.op == "logcumsumexp":
            src = self.var(node.args[0])
            return [
                f"{n} = _logaddexp({n}_carry, "
                f"tl.associative_scan(tl.where(mask, {src}, -float('inf')), 1, _logaddexp{reverse}))",
                f"{n}_carry = tl.sum(tl.where(lanes == {edge}, {n}, 0.0), axis=1, keep_dims=True)",
            ]
        fn, combine, ident = SCAN_FN[node.op]
        if node.dtype.is_floating_point:
            ident += ".0"
        src = self.var(node.args[0])
        zero = "0.0" if node.dtype.is_floating_point else "0"
        return [
            f"{n} = {n}_carry {combine} {fn}(tl.where(mask, {src}, {ident}), axis=1{reverse})",
            f"{n}_carry = tl.sum(tl.where(lanes == {edge}, {n}, {zero}), axis=1, keep_dims=True)",
        ]

    def emit(self) -> Emitted:
        name = f"_{self.prefix}_scan_kernel"
        params = self.kernel_params() + ["M", "N", "INNER", "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr"]
        body = [
            "pid = tl.program_id(0)",
            "rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]",
            "row_mask = rows < M",
            "row_off = (rows // INNER).to(tl.int64) * N * INNER + rows % INNER",
            "lanes = tl.arange(0, BLOCK_N)[None, :]",
        ]
        for t in self.tensors:
            if self.roles[t] in ("perrow", "scalar"):
                body.append(f"{t} = {self.load(t)}")
        for n in self.seg.nodes:
            node = self.nodes[n]
            if node.kind == "scan":
                ident = {"cumsum": "0.0", "cumprod": "1.0", "logcumsumexp": "-float('inf')"}[node.op]
                dtype = "tl.float32" if node.dtype.is_floating_point else "tl.int64"
                body.append(f"{n}_carry = tl.full([BLOCK_M, 1], {ident}, dtype={dtype})")
        body.append("tiles = tl.cdiv(N, BLOCK_N)")
        loop = [
            "start = (tiles - 1 - tile) * BLOCK_N" if self.reverse else "start = tile * BLOCK_N",
            "cols = start + lanes",
            "mask = row_mask & (cols < N)",
            "offs = row_off + cols.to(tl.int64) * INNER",
        ]
        for t in self.tensors:
            if self.roles[t] in ("full", "colparam"):
                loop.append(f"{t} = {self.load(t)}")
        for n in self.seg.nodes:
            if self.nodes[n].kind == "scan":
                loop += self.scan_lines(n)
            elif self.nodes[n].op in SCALAR_LEAVES:
                continue
            else:
                loop.append(self.statement(n))
        for o in self.seg.outputs:
            loop.append(f"tl.store({o}_ptr + offs, {self.store_value(o)}, mask=mask)")
        body.append("for tile in range(0, tiles):")
        body += indent(loop, 4)
        kernel = ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

        base_t = self.full_inputs[0]
        d = self.dim
        lines = [f"{t} = {t}.contiguous()" for t in self.tensors]
        lines.append(f"shape = {base_t}.shape")
        lines.append(f"N = shape[{d}]")
        lines.append(f"INNER = math.prod(shape[{d + 1}:])")
        lines.append("M = math.prod(shape) // max(N, 1)")
        lines.extend(self.size_lines("shape"))
        for o in self.seg.outputs:
            lines.append(f"{o} = torch.empty(shape, device={base_t}.device, dtype={self.dtype_expr(o)})")
        block_m, block_n = self.genes["BLOCK_M"], self.genes["BLOCK_N"]
        call = [a.removesuffix("_ptr") for a in self.kernel_params()] + ["M", "N", "INNER"]
        lines.append("if M > 0 and N > 0:")
        lines.append(
            f"    {name}[(cdiv(M, {block_m}),)]({', '.join(call)}, BLOCK_M={block_m}, "
            f"BLOCK_N=min(next_power_of_2(N), {block_n}), {self.launch_opts()})"
        )
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        helpers = [LOGADDEXP] if any(self.nodes[n].op == "logcumsumexp" for n in self.seg.nodes) else []
        return Emitted(
            "\n\n\n".join(["\n".join(kernel), *helpers]),
            "\n".join(launcher),
            self.launcher,
            self.tensors,
            self.scalars,
            self.seg.outputs,
            [name],
        )
