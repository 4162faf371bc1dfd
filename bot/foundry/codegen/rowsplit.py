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

The partials have one writer each, and the merge order is fixed (deterministic). With the `combine` gene
at "one_kernel" the two become one launch for rows of 2..MAX_SPLITS tiles (one_kernel): a program per tile
stores its partials, counts itself in the row's arrival counter (the only atomics) and, once the row is
complete, merges and writes its tile from registers: the row is read once.
Used only when every reduction of the segment sits in the first pass (a reduction that depends on
another, like a two-pass variance, needs the row twice before normalizing) and is a sum, max or min.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from foundry.codegen.kernels import IDENTITY, chan_merge, indent

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
# one-launch split rows: checks of the row's arrival counter before a program computes the row's partials
# itself (an atomic read from L2 is about 1 us on an H200: ~65 ms, never reached when programs start in order)
SPIN_LIMIT = 1 << 16

SPLITTABLE = frozenset({"sum", "max", "min"})
REGISTERS_PER_SM = 65536  # 32-bit registers per SM: every NVIDIA GPU since Volta, the H200 included
THREADS_PER_SM = 2048


def register_cap(threads: int, programs: int) -> int | None:
    """maxnreg under which `programs` programs of `threads` threads each fit on one SM by registers (allocated
    per warp in units of 256, so per thread in multiples of 8; at most 255), or None when that many threads do
    not fit on an SM at all (no cap helps then)."""
    if programs <= 0 or threads * programs > THREADS_PER_SM:
        return None
    return min(255, REGISTERS_PER_SM // (threads * programs) // 8 * 8)


def renamed(lines: list[str], suffix: str) -> list[str]:
    """Statements with every name they assign (and its later uses) suffixed: a copy of a computation that
    leaves the original's variables alone."""
    assigned = {m.group(1) for line in lines if (m := re.match(r"\s*(\w+)\s*[-+*/]?=(?!=)", line))}
    if not assigned:
        return list(lines)
    names = "|".join(sorted(assigned, key=len, reverse=True))
    target = re.compile(rf"^(\s*)({names})\b")  # the statement's own target (in a block or not)
    use = re.compile(rf"\b({names})\b(?!\s*=(?!=))")  # not a keyword argument (mask=...)
    return [use.sub(lambda m: m.group(1) + suffix, target.sub(rf"\g<1>\g<2>{suffix}", line)) for line in lines]


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

    def targets(self) -> list[str]:
        """The values the partial statistics reduce (the online max's operand for an online pair)."""
        em = self.em
        targets = [self.nodes[r].args[0] for r in self.reductions if r not in em.online and r not in em.welford]
        return targets + [self.nodes[em.online[r]].args[0] for r in self.reductions if r in em.online]

    def partial_stores(self, sid: str) -> list[str]:
        """A chunk's partial statistics (its accumulators collapsed) into its slot of the scratch tensor."""
        lines = [f"part = part_ptr + (rows * S + {sid}) * {self.width()}"]
        i = 0
        for r, names in self.slots():
            if names == (r,):
                lines += self.em.acc_final(r)
            for var in names:
                lines.append(f"tl.store(part + {i}, {var}, mask=row_mask)")
                i += 1
        return lines

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
        targets = self.targets()
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
        body += self.partial_stores("sid")
        text = "\n".join(body)
        operands = [f"{t}_ptr" for t in em.tensors] + em.scalars + em.sizes + self.extra()
        used = [p for p in operands if re.search(rf"\b{p}\b", text)]
        self.partial_args = [p.removesuffix("_ptr") for p in used]
        params = [*used, "part_ptr", "M", "N", "S", "CHUNK", "BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr"]
        self.partial_ch_tile = bool(re.search(r"\bCH_TILE\b", text))
        if self.partial_ch_tile:
            params.append("CH_TILE: tl.constexpr")
        return ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

    def merge_lines(self, cache: str = "", flat: bool = False) -> list[str]:
        """The row's statistics from its partials (masked slots past S are neutral); `cache`: a load cache
        modifier (".cg": from L2, for partials other programs of the same launch stored). flat: one row
        (`row`), the partials a 1-D vector and the statistics scalars. The one-launch kernel needs that: with
        [1, 1] statistics Triton gave the normalized tile the layout of the [1, BLOCK_S] partials, replicated
        in every thread (10-30x slower on the H200, 2026-12-04)."""
        em = self.em
        k = self.width()
        mod = f", cache_modifier='{cache}'" if cache else ""
        red = "axis=0" if flat else "axis=1, keep_dims=True"
        if flat:
            lines = [
                "splits = tl.arange(0, BLOCK_S)",
                "part_mask = splits < S",
                f"part = part_ptr + (row * S + splits) * {k}",
            ]
        else:
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
                    f"{r}_pcount = tl.load(part + {i}, mask=part_mask, other=0.0{mod})",
                    f"{r}_pmean = tl.load(part + {i + 1}, mask=part_mask, other=0.0{mod})",
                    f"{r}_pm2 = tl.load(part + {i + 2}, mask=part_mask, other=0.0{mod})",
                    f"{r}_count = tl.sum({r}_pcount, {red})",
                    f"{r}_mean = tl.sum({r}_pcount * {r}_pmean, {red}) / tl.maximum({r}_count, 1.0)",
                    f"{r}_pdev = {r}_pmean - {r}_mean",
                    f"{r}_m2 = tl.sum({r}_pm2 + {r}_pcount * {r}_pdev * {r}_pdev, {red})",
                    *em.acc_final(r),
                ]
                for v in squares:
                    lines += em.acc_final(v)
            elif r in em.online:
                m = em.online[r]
                lines += [
                    f"{m}_part = tl.load(part + {i}, mask=part_mask, other=-float('inf'){mod})",
                    f"{r}_prun = tl.load(part + {i + 1}, mask=part_mask, other=0.0{mod})",
                    f"{m} = tl.max({m}_part, {red})",
                    f"{r} = tl.sum(tl.where({m}_part == -float('inf'), 0.0, {r}_prun * tl.exp({m}_part - {m})), {red})",
                ]
            else:
                op = self.nodes[r].op
                fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[op]
                ident = IDENTITY[op]
                lines.append(f"{r} = {fn}(tl.load(part + {i}, mask=part_mask, other={ident}{mod}), {red})")
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
        body += self.outputs_lines(set(em.perrow_inputs()) | set(self.reductions), "tl.program_id(1)", looped=True)
        return ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

    def outputs_lines(self, known: set[str], sid: str, looped: bool) -> list[str]:
        """After the merge: the per-row values, stored by the row's first chunk, and the chunk's full outputs
        (over its tiles when looped; else from the one tile's values already in `known`)."""
        em = self.em
        known = set(known)
        ready = [
            n
            for n in em.seg.nodes
            if n not in known and em.roles[n] in ("perrow", "scalar") and self.nodes[n].kind == "pointwise"
        ]
        pre = em.closure(ready, known)
        lines = em.value_lines(pre, False, False)
        known |= set(pre)
        for o in self.row_outs:
            lines.append(f"tl.store({o}_ptr + rows, {em.store_value(o)}, mask=row_mask & ({sid} == 0))")
        if self.full_outs:
            tile = em.value_lines(em.closure(self.full_outs, known), False, False) + em.stores(self.full_outs)
            if not looped:
                return lines + tile
            loop = ["cols = start + tl.arange(0, BLOCK_N)[None, :]", "mask = row_mask & (cols < hi)", *tile]
            lines.append("for start in range(lo, hi, BLOCK_N):")
            lines += indent(loop, 4)
        return lines

    def tile_stats(self, r: str, start: str = "start", width: str = "BLOCK_N") -> list[str]:
        """One tile's partial statistics of reduction r, in the variables partial_stores reads, computed
        directly (for a tile of `width` elements from `start`). Its element count comes from the sizes, not
        from a reduction of the mask: Triton 3.6 fails to compile (TritonGPURemoveLayoutConversions) a tile's
        masked sum divided by tl.maximum of another reduction of the same tile, as the looped kernels' Welford
        step does, outside a loop."""
        em = self.em
        node = self.nodes[r]
        if r in em.welford or self.is_online_max(r):
            return []  # with the sum it shares a pass with
        src = em.var(node.args[0])
        if r in em.welford_sums:
            return [
                f"{r}_count = tl.minimum(N - {start}, {width}).to(tl.float32)  # the elements from {start} (< N)",
                f"{r}_mean = tl.sum(tl.where(mask, {src}, 0.0), axis=1, keep_dims=True) / {r}_count",
                f"{r}_dev = tl.where(mask, {src} - {r}_mean, 0.0)",
                f"{r}_m2 = tl.sum({r}_dev * {r}_dev, axis=1, keep_dims=True)",
            ]
        if r in em.online:
            m = em.online[r]
            v = em.var(self.nodes[m].args[0])
            return [
                f"{m} = tl.max(tl.where(mask, {v}, -float('inf')), axis=1, keep_dims=True)",
                f"{m}_safe = tl.where({m} == -float('inf'), 0.0, {m})  # a chunk of -inf only: 0, not NaN",
                f"{r}_run = tl.sum(tl.where(mask, tl.exp({v} - {m}_safe), 0.0), axis=1, keep_dims=True)",
            ]
        return [f"{r}_acc = tl.where(mask, {src}, {IDENTITY[node.op]})"]  # acc_final reduces it

    def one_kernel(self, name: str) -> list[str]:
        """Split rows in one launch (gene combine=one_kernel): a program per (row, chunk of one tile) computes
        its chunk's partial statistics, stores them, and counts itself in the row's arrival counter; then it
        waits for the row's other chunks, merges their partials and writes its chunk from the tile it still
        holds in registers, so the row is read once, not twice (the two-kernel form reads it again).

        Waiting is bounded (SPIN_LIMIT checks). GPUs start programs in order, so the chunks a program waits
        for are running or about to be whenever the row has no more chunks than SMs (the launcher uses this
        kernel for at most MAX_SPLITS); a program that still waits past the limit, or under the Triton
        interpreter (which runs programs one after another), computes the row's other partials itself from
        the input, the same values their own programs store, and goes on: never a deadlock, only a slower
        program. Each tile's statistics are one block reduction each (Welford per tile, not per lane)."""
        em = self.em
        known = set(em.perrow_inputs())
        targets = self.targets()
        body = [
            "# one program per (row, chunk of one tile): partial statistics, arrival, bounded wait, merge",
            "pid = tl.program_id(0)",
            "row = pid // S",
            "sid = pid % S",
            "rows = row + tl.arange(0, BLOCK_M)[:, None]",
            "row_mask = rows < M",
            "row_off = rows.to(tl.int64) * N",
        ]
        body += [f"{t} = {em.load(t, False)}" for t in em.perrow_inputs()]
        pre = self.hoisted(targets, known)
        body += em.value_lines(pre, False, False)
        known |= set(pre)
        tile_nodes = em.closure(targets, known)
        tile = ["cols = start + tl.arange(0, BLOCK_N)[None, :]", "mask = row_mask & (cols < N)"]
        tile += em.value_lines(tile_nodes, False, False)
        stats = [line for r in self.reductions for line in self.tile_stats(r)]
        body += ["start = sid * BLOCK_N", *tile, *stats, *self.partial_stores("sid")]
        body += [
            "tl.debug_barrier()  # every thread's partial stores come before the arrival (release)",
            "arrived = tl.atomic_add(sync_ptr + row, 1, sem='release') + 1",
            "spins = tl.full([], 0, tl.int32)",
            "while (arrived < S) & (spins < SPIN_LIMIT):",
            "    arrived = tl.atomic_add(sync_ptr + row, 0, sem='acquire')",
            "    spins += 1",
            "if arrived < S:",
            "    # waited too long, or interpreted: the row's partials from the input here, FB elements at a time",
            "    # (a whole tile at once would double the registers of every program, waiting or not; in names of",
            "    # their own: the branch yields nothing, and this program's tile stays as loaded)",
            *indent(renamed(self.fallback_lines(tile_nodes), "_o"), 4),
            "tl.debug_barrier()",
        ]
        body += self.merge_lines(cache=".cg", flat=True)
        body += self.outputs_lines(known | set(tile_nodes) | set(self.reductions), "sid", looped=False)
        params = em.kernel_params() + ["part_ptr", "sync_ptr", "M", "N", *self.extra(), "S", "SPIN_LIMIT"]
        params += ["BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", "BLOCK_S: tl.constexpr", "FB: tl.constexpr"]
        if self.extra():
            params.append("CH_TILE: tl.constexpr")
        return ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

    def fallback_lines(self, tile_nodes: list[str]) -> list[str]:
        """The one-launch kernel's fallback: every tile's partial statistics of this program's row, each
        tile read FB elements at a time and its statistics merged chunk by chunk (Chan's formula, the
        online rescale, or the plain reduction). The merged values equal the tile programs' own up to
        rounding. Reading a whole tile at once held a second tile in registers beside the program's own:
        ptxas then gave every program of the kernel 200 registers instead of 124 (8192-wide tiles over 4
        warps), and the H200 ran the launch in 0.111 ms instead of 0.082 (2026-12-04, one process; the
        launch's time also varies between processes: results-groupnorm-one-launch-h200.md)."""
        em = self.em
        init: list[str] = []
        merge: list[str] = []
        for r in self.reductions:
            if r in em.welford or self.is_online_max(r):
                continue
            if r in em.welford_sums:
                init += [f"{r}_{part} = tl.zeros([BLOCK_M, 1], dtype=tl.float32)" for part in ("count", "mean", "m2")]
                merge += chan_merge(r, f"{r}_count_c", f"{r}_mean_c", f"{r}_m2_c")
            elif r in em.online:
                m = em.online[r]
                init += [
                    f"{m} = tl.full([BLOCK_M, 1], -float('inf'), dtype=tl.float32)",
                    f"{r}_run = tl.zeros([BLOCK_M, 1], dtype=tl.float32)",
                ]
                merge += [
                    f"{m}_new = tl.maximum({m}, {m}_c)",
                    f"{m}_safe = tl.where({m}_new == -float('inf'), 0.0, {m}_new)",
                    f"{r}_run = {r}_run * tl.exp({m} - {m}_safe) + {r}_run_c * tl.exp({m}_c - {m}_safe)",
                    f"{m} = {m}_new",
                ]
            else:
                op = self.nodes[r].op
                init.append(f"{r}_acc = tl.full([BLOCK_M, 1], {IDENTITY[op]}, dtype=tl.float32)")
                chunk = f"tl.{op}({r}_acc_c, axis=1, keep_dims=True)"
                pair = {"max": "tl.maximum", "min": "tl.minimum"}.get(op)
                merge.append(f"{r}_acc = {pair}({r}_acc, {chunk})" if pair else f"{r}_acc += {chunk}")
        chunk_lines = ["cols = cstart + tl.arange(0, FB)[None, :]", "mask = row_mask & (cols < N)"]
        chunk_lines += em.value_lines(tile_nodes, False, False)
        chunk_lines += [line for r in self.reductions for line in self.tile_stats(r, "cstart", "FB")]
        body = [
            "start = other * BLOCK_N",
            *init,
            "for cstart in range(start, tl.minimum(start + BLOCK_N, N), FB):",
            *indent([*renamed(chunk_lines, "_c"), *merge], 4),
            *self.partial_stores("other"),
        ]
        return ["for other in range(0, S):", *indent(body, 4)]

    # -- launcher -------------------------------------------------------------------------------------

    def splits_lines(self, gene: int | str) -> list[str]:
        if gene == "auto":
            return [
                f"# auto: ~{TARGET_WAVES} programs per SM of an H200 ({SM_COUNT} SMs) when rows are few and long",
                f"splits = min({MAX_SPLITS}, next_power_of_2(cdiv({TARGET_WAVES * SM_COUNT}, M)), "
                f"cdiv(N, {MIN_CHUNK})) if M < {FEW_ROWS} and N >= {MIN_SPLIT_N} else 1",
            ]
        return [f"splits = min({int(gene)}, cdiv(N, 16))"]

    def fallback_chunk(self) -> int:
        """The one-launch fallback's chunk: 2 values per thread (at most a tile). The registers ptxas keeps for
        the branch are every program's: at 4 values per thread and 96 registers (5 programs per SM, 8192 over 4
        warps) group norm spilled 2 bytes and ran in 0.0808 ms, at 2 it did not spill and ran in 0.0795 (H200,
        triton 3.6, one process, 3 rounds each; stop23_polls in results-groupnorm-one-launch-h200.md)."""
        return min(int(self.em.genes["BLOCK_N"]), 2 * 32 * int(self.em.genes["num_warps"]))

    def register_cap_opt(self) -> str:
        """Gene occupancy: the one-launch kernel's register cap, sized to fit that many of its programs on an SM
        (0: the compiler's choice). Only this kernel takes it: it holds one tile per program and no loop state, the
        shape the cap was measured on (group norm, 8192 over 4 warps: 128 registers and 4 programs per SM
        uncapped, 96 and 5 capped, 1-2% faster on the H200, results-groupnorm-one-launch-h200.md). The module's
        other row kernels run for other shapes (more rows, longer rows) and keep loop state a cap chosen for
        this one would spill."""
        cap = register_cap(32 * int(self.em.genes["num_warps"]), int(self.em.genes.get("occupancy", 0)))
        return f", maxnreg={cap}" if cap else ""

    @property
    def one_launch(self) -> bool:
        """Gene combine: "one_kernel" merges a row's partials in the launch that made them (one_kernel),
        "two_kernels" in a second launch."""
        return self.em.genes.get("combine", "two_kernels") == "one_kernel"

    def launcher_lines(
        self,
        partial_name: str,
        finish_name: str,
        device: str,
        call: list[str],
        whole: list[str],
        one_name: str | None = None,
    ) -> list[str]:
        """The launcher's sizing and its split branch, with `whole` (the one-program-per-row launch) as the
        fallback; `call` is the row kernels' argument list (tensors, outputs, scalars, sizes, M, N and the
        group-norm extras). With `one_name` (the one-launch kernel), rows of 2..MAX_SPLITS tiles go to it and
        longer ones to the two kernels. Call after partial_kernel."""
        em = self.em
        block_n = em.genes["BLOCK_N"]
        n_at = call.index("M")
        opts = em.launch_opts()
        lines = self.splits_lines(em.genes["split"])
        one: list[str] = []
        if one_name is not None:
            ocall = [*call[:n_at], "partial", "arrived", *call[n_at:], "tiles", "spin_limit"]
            lines += [f"tiles = cdiv(N, {block_n})", f"one_launch = splits > 1 and 1 < tiles <= {MAX_SPLITS}"]
            one = [
                "if one_launch:",
                "    # one launch, a program per tile: the row's programs wait for each other's partials (bounded:",
                "    # about 1 us per check on the GPU; one check interpreted, where programs run one at a time)",
                f"    partial = torch.empty((M, tiles, {self.width()}), device={device}, dtype=torch.float32)",
                f"    arrived = torch.zeros((M,), device={device}, dtype=torch.int32)",
                f"    spin_limit = {SPIN_LIMIT} if {device}.type == 'cuda' else 1",
                f"    {one_name}[(M * tiles,)]({', '.join(ocall)}, BLOCK_M=1, BLOCK_N={block_n}, "
                f"BLOCK_S=next_power_of_2(tiles), FB={self.fallback_chunk()}"
                f"{f', CH_TILE=HW % {block_n} == 0' if self.extra() else ''}, "
                f"{opts}{self.register_cap_opt()})",
            ]
        # chunks of whole tiles, or of 16 elements (aligned loads) when shorter than a tile; the last chunk
        # takes the remainder, and rounding up may leave fewer chunks than asked for
        if block_n > 16:
            lines.append(f"align = {block_n} if cdiv(N, splits) >= {block_n} else 16")
        else:
            lines.append(f"align = {block_n}")
        lines += ["chunk = cdiv(cdiv(N, splits), align) * align", "splits = cdiv(N, chunk)"]
        pcall = [*self.partial_args, "partial", "M", "N", "splits", "chunk"]
        fcall = [*call[:n_at], "partial", *call[n_at:], "splits", "chunk"]
        grid2 = "(M, splits)" if self.full_outs else "(M, 1)"
        # group-norm parameters: one channel per tile when tiles and chunk starts sit on channel boundaries
        ch_tile = f", CH_TILE=HW % {block_n} == 0 and chunk % {block_n} == 0" if self.extra() else ""
        lines += one
        lines += [
            f"{'elif' if one else 'if'} splits > 1:",
            f"    partial = torch.empty((M, splits, {self.width()}), device={device}, dtype=torch.float32)",
            f"    {partial_name}[(M, splits)]({', '.join(pcall)}, BLOCK_M=1, BLOCK_N={block_n}"
            f"{ch_tile if self.partial_ch_tile else ''}, {opts})",
            f"    {finish_name}[{grid2}]({', '.join(fcall)}, BLOCK_M=1, BLOCK_N={block_n}, "
            f"BLOCK_S=next_power_of_2(splits){ch_tile}, {opts})",
        ]
        if whole[0].startswith("if "):
            return [*lines, "el" + whole[0], *whole[1:]]
        return [*lines, "else:", *indent(whole, 4)]
