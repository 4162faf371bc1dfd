"""Split-row reductions for row segments with few, very long rows (group norm over images, layer norm
over a huge hidden dim): one program per row cannot fill the GPU and walks its row serially, so each
row is cut into `splits` chunks of whole column tiles and two kernels run over a (rows, splits) grid:

  partial kernel   each program reduces its chunk to partial statistics in an fp32 scratch tensor
                   [rows, splits, K]: Welford (count, mean, M2) for a mean and its centred sum of
                   squares, (max, sum of exp) for an online softmax denominator, else the plain sum,
                   max or min of the chunk
  finish kernel    each program merges its row's partials (Chan's parallel formula for Welford, so
                   the variance stays as stable as the one-program form), computes the per-row values
                   and writes its own chunk of the full outputs, epilogue and group-norm affine included

No atomics: the partials have one writer each, and the merge order is fixed (deterministic).
Used only when every reduction of the segment sits in the first pass (a reduction that depends on
another, like a two-pass variance, needs the row twice before normalizing) and is a sum, max or min.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from foundry.codegen.kernels import IDENTITY, indent

if TYPE_CHECKING:
    from foundry.codegen.kernels import RowEmitter

# "auto" sizing, for an H200-class GPU: at least TARGET_WAVES programs per SM, rows split only when
# they are few (fewer than 2 per SM) and long, chunks of at least MIN_CHUNK elements (a chunk shorter
# than that spends more on the partials and the second launch than it gains).
SM_COUNT = 132
TARGET_WAVES = 4
MAX_SPLITS = 64
MIN_SPLIT_N = 16384
MIN_CHUNK = 4096
FEW_ROWS = 2 * SM_COUNT

SPLITTABLE = frozenset({"sum", "max", "min"})


class RowSplit:
    """The split-row kernels and launch lines of one row segment (see the module docstring)."""

    def __init__(self, emitter: RowEmitter) -> None:
        self.em = emitter
        self.nodes = emitter.nodes
        self.reductions = [n for n in emitter.seg.nodes if self.nodes[n].kind in ("reduce", "gather")]
        self.full_outs = [o for o in emitter.seg.outputs if emitter.roles[o] == "full"]
        self.row_outs = [o for o in emitter.seg.outputs if emitter.roles[o] == "perrow"]
        self.partial_args: list[str] = []  # set by partial_kernel
        self.partial_ch_tile = False  # set by partial_kernel: it reads group-norm parameters in its tile loop

    def reason(self) -> str | None:
        """Why this segment cannot be split, or None when it can."""
        if not self.reductions:
            return "no reduction"
        for r in self.reductions:
            op = self.nodes[r].op
            if op not in SPLITTABLE:
                return f"{op} has no merge of partial results"
            if self.em.level[r] != 1:
                return f"{r} needs another reduction of the row first (two passes)"
        return None

    def is_online_max(self, r: str) -> bool:
        return any(m == r for m in self.em.online.values())

    def slots(self) -> list[tuple[str, tuple[str, ...]]]:
        """Per reduction (or merged pair), the kernel variables its partial statistics live in."""
        out: list[tuple[str, tuple[str, ...]]] = []
        for r in self.reductions:
            if r in self.em.welford or self.is_online_max(r):
                continue  # stored with the sum they share a pass with
            if r in self.em.welford_sums:
                out.append((r, (f"{r}_count", f"{r}_mean", f"{r}_m2")))
            elif r in self.em.online:
                out.append((r, (self.em.online[r], f"{r}_run")))
            else:
                out.append((r, (r,)))
        return out

    def width(self) -> int:
        return sum(len(names) for _, names in self.slots())

    # -- kernels --------------------------------------------------------------------------------------

    def extra(self) -> list[str]:
        params = self.em.params()
        return [p for p in ("G", "CPG", "HW") if p in params]

    def row_header(self, perrow: list[str], reverse: bool = False) -> list[str]:
        # reverse: programs start on the chunks the partial kernel read last, which may still sit in L2
        sid = "S - 1 - tl.program_id(1)  # last-read chunks first (L2)" if reverse else "tl.program_id(1)"
        lines = [
            f"sid = {sid}",
            "rows = tl.program_id(0) + tl.arange(0, BLOCK_M)[:, None]",
            "row_mask = rows < M",
            "row_off = rows.to(tl.int64) * N",
            "lo = sid * CHUNK",
            "hi = tl.minimum(lo + CHUNK, N)",
        ]
        for t in perrow:
            lines.append(f"{t} = {self.em.load(t, False)}")
        return lines

    def hoisted(self, targets: list[str], known: set[str]) -> list[str]:
        """Per-row members the tile loop needs, computed once before it."""
        em = self.em
        found = [
            n
            for n in em.closure(targets, known)
            if n in em.members and em.roles[n] in ("perrow", "scalar") and self.nodes[n].kind == "pointwise"
        ]
        return em.closure(found, known) if found else []

    def partial_kernel(self, name: str) -> list[str]:
        """The partial-statistics kernel; sets self.partial_args, the launcher values it takes (the
        operands its reductions read, not the epilogue's)."""
        em = self.em
        known = set(em.perrow_inputs())
        targets = [self.nodes[r].args[0] for r in self.reductions if r not in em.online and r not in em.welford]
        targets += [self.nodes[em.online[r]].args[0] for r in self.reductions if r in em.online]
        read = set(em.closure(targets, set()))
        perrow = [t for t in em.perrow_inputs() if t in read]
        body = ["# one program per (row, chunk): the chunk's partial statistics", *self.row_header(perrow)]
        pre = self.hoisted(targets, known)
        body += em.value_lines(pre, False, False)
        known |= set(pre)
        for r in self.reductions:
            body += em.acc_init(r)
        loop = ["cols = start + tl.arange(0, BLOCK_N)[None, :]", "mask = row_mask & (cols < hi)"]
        loop += em.value_lines(em.closure(targets, known), False, False)
        for r in self.reductions:
            loop += em.acc_update(r)
        body.append("for start in range(lo, hi, BLOCK_N):")
        body += indent(loop, 4)
        for r in self.reductions:
            body += em.acc_collapse(r)
        body.append(f"part = part_ptr + (rows * S + sid) * {self.width()}")
        i = 0
        for r, names in self.slots():
            if names == (r,):
                body += em.acc_final(r)
            for var in names:
                body.append(f"tl.store(part + {i}, {var}, mask=row_mask)")
                i += 1
        text = "\n".join(body)
        operands = [f"{t}_ptr" for t in em.tensors] + em.scalars + em.sizes + self.extra()
        used = [p for p in operands if re.search(rf"\b{p}\b", text)]
        self.partial_args = [p.removesuffix("_ptr") for p in used]
        params = [*used, "part_ptr", "M", "N", "S", "CHUNK", "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr"]
        self.partial_ch_tile = bool(re.search(r"\bCH_TILE\b", text))
        if self.partial_ch_tile:
            params.append("CH_TILE: tl.constexpr")
        return ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

    def merge_lines(self) -> list[str]:
        """The row's statistics from its partials (masked slots past S are neutral)."""
        em = self.em
        k = self.width()
        lines = [
            "splits = tl.arange(0, BLOCK_S)[None, :]",
            "part_mask = row_mask & (splits < S)",
            f"part = part_ptr + (rows * S + splits) * {k}",
        ]
        i = 0
        for r, names in self.slots():
            if r in em.welford_sums:
                squares = [v for v, total in em.welford.items() if total == r]
                lines += [
                    f"{r}_pcount = tl.load(part + {i}, mask=part_mask, other=0.0)",
                    f"{r}_pmean = tl.load(part + {i + 1}, mask=part_mask, other=0.0)",
                    f"{r}_pm2 = tl.load(part + {i + 2}, mask=part_mask, other=0.0)",
                    f"{r}_count = tl.sum({r}_pcount, axis=1, keep_dims=True)",
                    f"{r}_mean = tl.sum({r}_pcount * {r}_pmean, axis=1, keep_dims=True) / tl.maximum({r}_count, 1.0)",
                    f"{r}_pdev = {r}_pmean - {r}_mean",
                    f"{r}_m2 = tl.sum({r}_pm2 + {r}_pcount * {r}_pdev * {r}_pdev, axis=1, keep_dims=True)",
                    *em.acc_final(r),
                ]
                for v in squares:
                    lines += em.acc_final(v)
            elif r in em.online:
                m = em.online[r]
                lines += [
                    f"{m}_part = tl.load(part + {i}, mask=part_mask, other=-float('inf'))",
                    f"{r}_prun = tl.load(part + {i + 1}, mask=part_mask, other=0.0)",
                    f"{m} = tl.max({m}_part, axis=1, keep_dims=True)",
                    f"{r} = tl.sum({r}_prun * tl.exp({m}_part - {m}), axis=1, keep_dims=True)",
                ]
            else:
                op = self.nodes[r].op
                fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[op]
                ident = IDENTITY[op]
                lines.append(f"{r} = {fn}(tl.load(part + {i}, mask=part_mask, other={ident}), axis=1, keep_dims=True)")
            i += len(names)
        return lines

    def finish_kernel(self, name: str) -> list[str]:
        em = self.em
        params = em.kernel_params() + ["part_ptr", "M", "N", *self.extra()]
        params += ["S", "CHUNK", "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", "BLOCK_S: tl.constexpr"]
        if self.extra():
            params.append("CH_TILE: tl.constexpr")
        body = [
            "# one program per (row, chunk): merge the row's partials, then write the chunk",
            *self.row_header(em.perrow_inputs(), reverse=bool(self.full_outs)),
        ]
        body += self.merge_lines()
        known = set(em.perrow_inputs()) | set(self.reductions)
        ready = [
            n
            for n in em.seg.nodes
            if n not in known and em.roles[n] in ("perrow", "scalar") and self.nodes[n].kind == "pointwise"
        ]
        pre = em.closure(ready, known)
        body += em.value_lines(pre, False, False)
        known |= set(pre)
        for o in self.row_outs:
            body.append(f"tl.store({o}_ptr + rows, {em.store_value(o)}, mask=row_mask & (tl.program_id(1) == 0))")
        if self.full_outs:
            loop = ["cols = start + tl.arange(0, BLOCK_N)[None, :]", "mask = row_mask & (cols < hi)"]
            loop += em.value_lines(em.closure(self.full_outs, known), False, False)
            loop += em.stores(self.full_outs)
            body.append("for start in range(lo, hi, BLOCK_N):")
            body += indent(loop, 4)
        return ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

    # -- launcher -------------------------------------------------------------------------------------

    def splits_lines(self, gene: int | str) -> list[str]:
        if gene == "auto":
            return [
                f"# auto: ~{TARGET_WAVES} programs per SM of an H200 ({SM_COUNT} SMs) when rows are few and long",
                f"splits = min({MAX_SPLITS}, triton.next_power_of_2(triton.cdiv({TARGET_WAVES * SM_COUNT}, M)), "
                f"triton.cdiv(N, {MIN_CHUNK})) if M < {FEW_ROWS} and N >= {MIN_SPLIT_N} else 1",
            ]
        return [f"splits = min({int(gene)}, triton.cdiv(N, 16))"]

    def launcher_lines(
        self, partial_name: str, finish_name: str, device: str, call: list[str], whole: list[str]
    ) -> list[str]:
        """The launcher's sizing and its split branch, with `whole` (the one-program-per-row launch) as the
        fallback; `call` is the row kernels' argument list (tensors, outputs, scalars, sizes, M, N and the
        group-norm extras). Call after partial_kernel."""
        em = self.em
        block_n = em.genes["BLOCK_N"]
        lines = self.splits_lines(em.genes["split"])
        # chunks of whole tiles, or of 16 elements (aligned loads) when shorter than a tile; the last chunk
        # takes the remainder, and rounding up may leave fewer chunks than asked for
        if block_n > 16:
            lines.append(f"align = {block_n} if triton.cdiv(N, splits) >= {block_n} else 16")
        else:
            lines.append(f"align = {block_n}")
        lines += ["chunk = triton.cdiv(triton.cdiv(N, splits), align) * align", "splits = triton.cdiv(N, chunk)"]
        n_at = call.index("M")
        pcall = [*self.partial_args, "partial", "M", "N", "splits", "chunk"]
        fcall = [*call[:n_at], "partial", *call[n_at:], "splits", "chunk"]
        grid2 = "(M, splits)" if self.full_outs else "(M, 1)"
        opts = em.launch_opts()
        # group-norm parameters: one channel per tile when tiles and chunk starts sit on channel boundaries
        ch_tile = f", CH_TILE=HW % {block_n} == 0 and chunk % {block_n} == 0" if self.extra() else ""
        lines += [
            "if splits > 1:",
            f"    partial = torch.empty((M, splits, {self.width()}), device={device}, dtype=torch.float32)",
            f"    {partial_name}[(M, splits)]({', '.join(pcall)}, BLOCK_M=1, BLOCK_N={block_n}"
            f"{ch_tile if self.partial_ch_tile else ''}, {opts})",
            f"    {finish_name}[{grid2}]({', '.join(fcall)}, BLOCK_M=1, BLOCK_N={block_n}, "
            f"BLOCK_S=triton.next_power_of_2(splits){ch_tile}, {opts})",
        ]
        if whole[0].startswith("if "):
            return [*lines, "el" + whole[0], *whole[1:]]
        return [*lines, "else:", *indent(whole, 4)]
