"""(Batched) matmul with its pointwise epilogue: tiles of BLOCK_M x BLOCK_N, a K loop, grouped
program order (GROUP_M) for L2 reuse, and a choice of fp32 accumulation schemes."""

from __future__ import annotations

from typing import Any

from foundry.codegen.ir import UnsupportedError
from foundry.codegen.kernels import Emitted, SegmentEmitter, indent
from foundry.codegen.plan import numel

# fp32 matmul schemes: all accumulate in fp32.
#   ieee    fp32 FMA products (exact, slowest)
#   tf32x3  Triton's three-pass TF32 (hi*hi + hi*lo + lo*hi): ~fp32 accuracy on tensor cores
#   split3  the same split written out by hand (mantissa mask), for Triton builds without tf32x3
#   tf32    one TF32 pass (only when the operator's precision class allows ~1e-3 error)
PRECISIONS = ("ieee", "tf32x3", "split3", "tf32")
TF32_MASK = "0xFFFFE000"  # keeps the 10 explicit mantissa bits TF32 multiplies exactly


class MatmulEmitter(SegmentEmitter):
    def emit(self) -> Emitted:
        mm = self.seg.nodes[0]
        node = self.nodes[mm]
        if node.op != "matmul":
            raise UnsupportedError("matmul", "segment does not start with a matmul")
        a, b = node.args
        ra, rb = len(self.nodes[a].shape), len(self.nodes[b].shape)
        if (ra, rb) not in ((2, 2), (3, 3)):
            raise UnsupportedError("matmul", f"operands of rank {ra} and {rb}")
        batched = ra == 3
        epi_tensors = [t for t in self.tensors if t not in (a, b)]
        for t in epi_tensors:
            if numel(self.nodes[t].shape) == 1 and self.nodes[t].op != "input":
                continue
        half = self.nodes[a].dtype.itemsize == 2
        precision = self.genes.get("precision", "ieee")
        name = f"_{self.prefix}_fwd_kernel"
        params = (
            [f"{a}_ptr", f"{b}_ptr"]
            + [f"{t}_ptr" for t in epi_tensors]
            + [f"{o}_ptr" for o in self.seg.outputs]
            + self.scalars
            + self.sizes
            + ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bk", "stride_bn"]
            + [f"{t}_s{d}" for t in epi_tensors for d in "bmn"]
            + ["BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", "BLOCK_K: tl.constexpr", "GROUP_M: tl.constexpr"]
        )
        body = [
            "pid = tl.program_id(0)",
            "batch = tl.program_id(1).to(tl.int64)",
            "num_pid_m = tl.cdiv(M, BLOCK_M)",
            "num_pid_n = tl.cdiv(N, BLOCK_N)",
            "# grouped ordering: GROUP_M row-blocks share their B tiles through L2",
            "group_size = GROUP_M * num_pid_n",
            "first_m = (pid // group_size) * GROUP_M",
            "rows_in_group = tl.minimum(num_pid_m - first_m, GROUP_M)",
            "pid_m = first_m + (pid % group_size) % rows_in_group",
            "pid_n = (pid % group_size) // rows_in_group",
            "rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
            "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            "rk = tl.arange(0, BLOCK_K)",
            f"a_ptrs = {a}_ptr + batch * stride_ab + rm[:, None] * stride_am + rk[None, :] * stride_ak",
            f"b_ptrs = {b}_ptr + batch * stride_bb + rk[:, None] * stride_bk + rn[None, :] * stride_bn",
            "acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
            "for k in range(0, K, BLOCK_K):",
        ]
        loop = [
            "a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)",
            "b = tl.load(b_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)",
        ]
        if half:
            loop.append("acc = tl.dot(a, b, acc)")
        elif precision == "split3":
            loop += [
                f"a_hi = (a.to(tl.uint32, bitcast=True) & {TF32_MASK}).to(tl.float32, bitcast=True)",
                f"b_hi = (b.to(tl.uint32, bitcast=True) & {TF32_MASK}).to(tl.float32, bitcast=True)",
                'acc = tl.dot(a - a_hi, b_hi, acc, input_precision="tf32")',
                'acc = tl.dot(a_hi, b - b_hi, acc, input_precision="tf32")',
                'acc = tl.dot(a_hi, b_hi, acc, input_precision="tf32")',
            ]
        else:
            loop.append(f'acc = tl.dot(a, b, acc, input_precision="{precision}")')
        loop += ["a_ptrs += BLOCK_K * stride_ak", "b_ptrs += BLOCK_K * stride_bk"]
        body += indent(loop, 4)
        body += [f"{mm} = acc", "mask = (rm[:, None] < M) & (rn[None, :] < N)"]
        for t in epi_tensors:
            off = f"batch * {t}_sb + rm[:, None] * {t}_sm + rn[None, :] * {t}_sn"
            body.append(f"{t} = {self.load_cast(f'tl.load({t}_ptr + {off}, mask=mask, other=0.0)', t)}")
        for n in self.seg.nodes[1:]:
            if n == self.seg.alias:
                body.append(f"{n} = {self.nodes[n].args[0]}  # the (M, N) tile of the reshaped result")
            else:
                body.append(self.statement(n))
        for o in self.seg.outputs:
            body.append(
                f"tl.store({o}_ptr + batch * M * N + rm[:, None] * N + rn[None, :], {self.store_value(o)}, mask=mask)"
            )
        kernel = ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

        lines = []
        if batched:
            lines += [
                f"B, M, K = {a}.shape",
                f"N = {b}.shape[2]",
                "shape = (B, M, N)",
                f"stride_ab, stride_am, stride_ak = {a}.stride()",
                f"stride_bb, stride_bk, stride_bn = {b}.stride()",
            ]
        else:
            lines += [
                f"M, K = {a}.shape",
                f"N = {b}.shape[1]",
                "B = 1",
                "shape = (M, N)",
                f"stride_am, stride_ak = {a}.stride()",
                f"stride_bk, stride_bn = {b}.stride()",
                "stride_ab = 0",
                "stride_bb = 0",
            ]
        for t in epi_tensors:
            if self.seg.alias and len(self.nodes[t].shape) > 2:
                whole = self.nodes[t].shape == self.seg.base
                lines.append(f"{t} = {t}.reshape(M, N)" if whole else f"{t} = {t}.reshape({t}.shape[-1])")
            if batched:
                lines.append(f"{t}_sb, {t}_sm, {t}_sn = {t}.expand(shape).stride()")
            else:
                lines += [f"{t}_sm, {t}_sn = {t}.expand(shape).stride()", f"{t}_sb = 0"]
        lines.extend(self.size_lines("shape"))
        for o in self.seg.outputs:
            lines.append(f"{o} = torch.empty(shape, device={a}.device, dtype={self.dtype_expr(o)})")
        g = self.genes
        lines.append(f"grid = (cdiv(M, {g['BLOCK_M']}) * cdiv(N, {g['BLOCK_N']}), B)")
        call = (
            [a, b]
            + epi_tensors
            + list(self.seg.outputs)
            + self.scalars
            + self.sizes
            + ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bk", "stride_bn"]
            + [f"{t}_s{d}" for t in epi_tensors for d in "bmn"]
        )
        lines.append(
            f"{name}[grid]({', '.join(call)}, BLOCK_M={g['BLOCK_M']}, BLOCK_N={g['BLOCK_N']}, "
            f"BLOCK_K={g['BLOCK_K']}, GROUP_M={g['GROUP_M']}, num_warps={g['num_warps']}, "
            f"num_stages={g['num_stages']})"
        )
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        emitted = Emitted(
            "\n".join(kernel), "\n".join(launcher), self.launcher, self.tensors, self.scalars, self.seg.outputs, [name]
        )
        if self.seg.alias:
            after = self.seg.nodes.index(self.seg.alias)
            emitted.reshaped = {o: self.seg.alias for o in self.seg.outputs if self.seg.nodes.index(o) >= after}
        return emitted

    def launcher_params(self) -> list[str]:
        return self.tensors + self.scalars


def matmul_precision_ok(precision: str, tolerance_class: str) -> bool:
    """tf32 alone is ~1e-3 relative: only for operators declared tf32 or looser."""
    return precision != "tf32" or tolerance_class in ("tf32", "fp16", "bf16")


__all__ = ["MatmulEmitter", "PRECISIONS", "matmul_precision_ok", "Any"]
