"""N-d convolution (conv1d/2d/3d, transposed too) with its pointwise epilogue, and the pieces pooling shares.

Three templates, chosen by the gene `algo` (or at run time by the shapes with "auto": gemm for groups at
least one tl.dot tile wide, plane for depthwise, direct for the other narrow groups):

  gemm    implicit GEMM per group: rows are output positions (N * spatial), columns the group's output
          channels, K runs over in-channels x kernel taps (one flat range, or with the gene k_order "tap"
          taps outside and in-channels inside); the input tile is gathered on the fly (zero padding by
          masks) and multiplied with tl.dot (fp32 schemes as in matmul: ieee or tf32x3); with the gene
          layout "channels_last" the launcher stages the input channels-last (in-channels contiguous) and
          K runs in-channels fastest, so the gathered tile is contiguous along K; with the gene split_k > 1
          each output tile's K range is shared by that many programs (the in-channels, for the tap-major
          loop), which write fp32 partials; one flat kernel sums them and runs the epilogue (for few, deep
          output tiles: a late-stage conv over a small image)
  direct  a [positions x channels] tile accumulating input x weight products tap by tap: for depthwise and
          narrow groups, where a GEMM's columns (channels per group) would be mostly padding
  plane   one output channel per program over a 2-d tile of its last two spatial dims (a row for conv1d),
          kernel taps unrolled: channel, weights and epilogue parameters are scalars, positions need no
          division (the direct kernel splits flat positions with // and % per element); for depthwise

A transposed convolution is computed in gather form: output o takes input i = (o + pad - k * dil) / stride
where that division is exact. With the gene `library` (hybrid policy only) the launcher calls torch's
convolution and one Triton kernel runs the epilogue over its result.

Epilogue operands broadcast against the (N, C, *spatial) output: each is addressed by (n, c, flat spatial)
with strides taken from its expanded view; one whose spatial dims are partly broadcast is expanded first.
For a conv with groups 1 whose channels fit one tile (at most CHANNEL_TILE at every declared size), the
planner may also put reductions over the channels (sum / max / min over dim 1: a channel mean, softmax)
and what follows them in the epilogue; the GEMM then runs with one tile spanning every channel.
"""

from __future__ import annotations

from typing import Any

from foundry.codegen.ir import UnsupportedError
from foundry.codegen.kernels import Emitted, SegmentEmitter, indent
from foundry.codegen.plan import numel, right_align

# fp32 schemes that stay inside fp32 tolerance (1e-4): exact FMA products, or 3xTF32 on tensor cores
PRECISIONS = ("ieee", "tf32x3")
ALGOS = ("auto", "gemm", "direct", "plane")
LAYOUTS = ("nchw", "channels_last")  # the GEMM's input: as given, or staged with in-channels contiguous
EPILOGUE_BLOCK = 1024  # library path: 4 warps x 32 lanes x 8 fp32 per lane (two 16-byte accesses)
GEMM_MIN_CHANNELS = 16  # "auto": a group narrower than one tl.dot tile (16 columns or K) runs plane or direct
SPLITS = (1, 2, 4, 8)  # split-K: programs sharing one output tile's K range (partials, then one epilogue pass)
CHANNEL_TILE = 128  # most output channels one GEMM tile spans for a reduction over channels in the epilogue
REDUCE_IDENTITY = {"sum": "0.0", "max": "-float('inf')", "min": "float('inf')"}


def nc_positions() -> list[str]:
    """Lines of a flat kernel over an (N, C, spatial) tensor: the block's offsets `offs` (masked by TOTAL)
    and each one's sample n, channel c and spatial position s (OS positions per channel)."""
    return [
        "pid = tl.program_id(0)",
        "# 32-bit index arithmetic (divisions are cheap) unless the tensor has 2**31 elements or more",
        "if WIDE:",
        "    pid = pid.to(tl.int64)",
        "offs = pid * BLOCK + tl.arange(0, BLOCK)",
        "mask = offs < TOTAL",
        "s = offs % OS",
        "nc = offs // OS",
        "c = nc % C",
        "n = nc // C",
    ]


def coords(src: str, prefix: str, sizes: list[str]) -> list[str]:
    """Lines splitting a flat index `src` into per-dim coordinates prefix0.. (last dim fastest)."""
    d = len(sizes)
    if d == 1:
        return [f"{prefix}0 = {src}"]
    lines = [f"{prefix}_rest = {src}"]
    for i in range(d - 1, 0, -1):
        lines.append(f"{prefix}{i} = {prefix}_rest % {sizes[i]}")
        lines.append(f"{prefix}_rest = {prefix}_rest // {sizes[i]}")
    lines.append(f"{prefix}0 = {prefix}_rest")
    return lines


def affine(x: str, scale: int, shift: int) -> str:
    """`x * scale + shift` without the identity parts."""
    out = x if scale == 1 else f"{x} * {scale}"
    return out if shift == 0 else f"{out} + {shift}" if shift > 0 else f"{out} - {-shift}"


def flat(names: list[str], sizes: list[str]) -> str:
    """Row-major flat index of coordinates `names` over `sizes`."""
    expr = names[0]
    for name, size in zip(names[1:], sizes[1:], strict=True):
        expr = f"({expr}) * {size} + {name}"
    return expr


class ChannelEpilogue(SegmentEmitter):
    """Operands of an (N, C, *spatial) iteration space, addressed by (n, c, flat spatial). The segment's
    conv / pool node is its head; nodes after it are the epilogue, nodes before it (pooling only) a
    prologue computed per window tap at input coordinates."""

    def head_index(self) -> int:
        return next(i for i, n in enumerate(self.seg.nodes) if self.nodes[n].op in ("conv", "pool"))

    def epilogue_nodes(self) -> list[str]:
        return self.seg.nodes[self.head_index() + 1 :]

    def prologue_nodes(self) -> list[str]:
        return self.seg.nodes[: self.head_index()]

    def tensors_of(self, nodes: list[str]) -> list[str]:
        used = {a for n in nodes for a in self.nodes[n].args}
        return [t for t in self.tensors if t in used]

    def epilogue_tensors(self) -> list[str]:
        """Tensors the epilogue reads (the main operands too, when the epilogue reuses them: a residual)."""
        return self.tensors_of(self.epilogue_nodes())

    def pointers(self, main: list[str], epi: list[str]) -> list[str]:
        return main + [t for t in epi if t not in main]

    def spatial_role(self, t: str, base: tuple[int, ...] | None = None) -> str:
        base = base or self.seg.base
        aligned = right_align(self.nodes[t].shape, len(base))
        spatial = aligned[2:]
        if numel(spatial) == 1 or all(s == 1 for s in spatial):
            return "bcast"
        if tuple(spatial) == tuple(base[2:]):
            return "full"
        return "expand"

    def operand_lines(
        self, epi: list[str], shape: str = "shape", tag: str = "s", base: tuple[int, ...] | None = None
    ) -> list[str]:
        """Launcher lines: each operand made addressable, its (n, c) strides against `shape`."""
        lines = []
        for t in epi:
            if self.spatial_role(t, base) == "expand":
                lines.append(f"{t} = {t}.expand({shape}).contiguous()")
            else:
                lines.append(f"{t} = {t}.contiguous()")
            lines.append(f"{t}_{tag}n, {t}_{tag}c = {t}.expand({shape}).stride()[:2]")
        return lines

    def operand_load(
        self, t: str, n: str, c: str, s: str, mask: str | None, tag: str = "s", base: tuple[int, ...] | None = None
    ) -> str:
        """The load of operand `t` at sample n, channel c, flat spatial s; mask None: the address is in bounds
        (a scalar load where n and c are scalars)."""
        off = f"{n}.to(tl.int64) * {t}_{tag}n + {c} * {t}_{tag}c"
        if self.spatial_role(t, base) != "bcast":
            off += f" + {s}"
        if numel(self.nodes[t].shape) == 1:
            return f"{t} = {self.load_cast(f'tl.load({t}_ptr)', t)}"
        masked = f", mask={mask}, other=0.0" if mask else ""
        return f"{t} = {self.load_cast(f'tl.load({t}_ptr + {off}{masked})', t)}"

    folded = ""  # an epilogue node the library convolution computed (its bias add)

    def epilogue_body(self, head: str, value: str) -> list[str]:
        """The epilogue statements after `head` (the conv / pool node) is bound to `value`."""
        lines = [f"{head} = {value}"]
        for n in self.epilogue_nodes():
            if n == self.folded:
                lines.append(f"{n} = {head}  # the bias was added by the library convolution")
            else:
                lines.append(self.statement(n))
        return lines

    def stride_args(self, epi: list[str], tag: str = "s") -> list[str]:
        return [f"{t}_{tag}{d}" for t in epi for d in "nc"]

    def flat_epilogue_kernel(self, name: str, src: str, epi: list[str], splits: bool = False) -> list[str]:
        """A flat kernel over a finished (N, C, *spatial) tensor `src`: loads it, runs the epilogue, stores.
        With `splits`, `src` holds SPLIT_K partial sums of that tensor one after another: it adds them up."""
        params = (
            [f"{src}_ptr"]
            + [f"{t}_ptr" for t in epi]
            + [f"{o}_ptr" for o in self.seg.outputs]
            + self.scalars
            + self.sizes
            + ["TOTAL", "C", "OS"]
            + self.stride_args(epi)
            + ["BLOCK: tl.constexpr", "WIDE: tl.constexpr"]
            + (["SPLIT_K: tl.constexpr"] if splits else [])
        )
        body = [
            *nc_positions(),
            f"acc = tl.load({src}_ptr + offs, mask=mask, other=0.0)",
        ]
        if splits:
            body += [
                f"src = {src}_ptr + offs",
                "for sk in tl.static_range(1, SPLIT_K):",
                "    src += TOTAL  # the next partial (64-bit pointer arithmetic)",
                "    acc += tl.load(src, mask=mask, other=0.0)",
            ]
        body += [self.operand_load(t, "n", "c", "s", "mask") for t in epi]
        body += self.epilogue_body(self.seg.nodes[self.head_index()], "acc")
        body += [f"tl.store({o}_ptr + offs, {self.store_value(o)}, mask=mask)" for o in self.seg.outputs]
        return ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]


class ConvEmitter(ChannelEpilogue):
    def channel_reductions(self) -> list[str]:
        """Reductions over the channels in the epilogue (the planner puts them there only for a conv with
        groups 1 whose channels fit one tile): the GEMM runs with one tile spanning all channels."""
        return [n for n in self.epilogue_nodes() if self.nodes[n].kind == "reduce"]

    def statement(self, name: str) -> str:
        node = self.nodes[name]
        if node.kind != "reduce":
            return super().statement(name)
        # over the tile's channels (axis 0), padding channels masked out; kept as [1, positions]
        src = self.var(node.args[0])
        fn = f"tl.{node.op}"
        return f"{name} = {fn}(tl.where(mask_n[:, None], {src}, {REDUCE_IDENTITY[node.op]}), axis=0)[None, :]"

    def out_shape(self, name: str) -> str:
        """The launcher's shape expression of segment output `name`: the conv's, or reduced over channels."""
        shape = self.nodes[name].shape
        if shape == self.head.shape:
            return "shape"
        kept = len(shape) == len(self.head.shape)
        return f"(N, {'1, ' if kept else ''}{', '.join(self.dims('O'))})"

    def emit(self) -> Emitted:
        head = self.nodes[self.seg.nodes[0]]
        if head.op != "conv":
            raise UnsupportedError("conv", "segment does not start with a convolution")
        self.head = head
        self.x, self.w = head.args
        self.d = len(head.shape) - 2
        self.transposed = bool(head.attrs["transposed"])
        at = head.attrs
        # sub-pixel form: a strided transposed conv (dilation 1) splits its outputs by stride phase; each
        # phase meets only every stride-th tap, so the GEMM's K covers those taps and nothing else
        self.subpixel = self.transposed and all(v == 1 for v in at["dilation"]) and any(v > 1 for v in at["stride"])
        epi = self.epilogue_tensors()
        library = bool(self.genes.get("library", False))
        algo = self.genes.get("algo", "auto")
        if algo not in ALGOS:
            raise UnsupportedError("conv", f"algo gene {algo!r}")
        if self.channel_reductions():
            algo = "gemm"  # the reduction needs every channel of a position in one program
        kernels: list[list[str]] = []
        names: list[str] = []
        self.bias = ""
        if library:
            self.folded, self.bias = self.library_bias()
            rest = [n for n in self.epilogue_nodes() if n != self.folded]
            epi = self.tensors_of(rest)
            # nothing left for Triton here (conv + bias feeding a norm kernel …): the library result is the
            # output, when other kernels of the candidate launch
            self.bare = not rest and len(self.seg.outputs) == 1 and bool(self.genes.get("others"))
            if not self.bare:
                names.append(self.kernel_name("epilogue"))
                kernels.append(self.flat_epilogue_kernel(names[0], "conv_out", epi))
        else:
            if algo in ("auto", "gemm"):
                names.append(self.kernel_name("gemm"))
                kernels.append(self.gemm_kernel(names[-1], epi))
                if self.split_k() > 1:  # the partials' sum and the epilogue
                    names.append(self.kernel_name("epilogue"))
                    kernels.append(self.flat_epilogue_kernel(names[-1], "part", epi, splits=True))
            if algo in ("auto", "direct"):
                names.append(self.kernel_name("direct"))
                kernels.append(self.direct_kernel(names[-1], epi))
            if algo in ("auto", "plane"):
                names.append(self.kernel_name("plane"))
                kernels.append(self.plane_kernel(names[-1], epi))
        launcher = self.launcher_lines(epi, library, algo)
        return Emitted(
            "\n\n\n".join("\n".join(k) for k in kernels),
            "\n".join(launcher),
            self.launcher,
            self.tensors,
            self.scalars,
            self.seg.outputs,
            names,
        )

    def library_bias(self) -> tuple[str, str]:
        """(the bias-add node, the per-channel bias view) when the epilogue starts by adding a bias the
        library convolution can add itself; else empty names."""
        head = self.seg.nodes[0]
        epilogue = self.epilogue_nodes()
        if not epilogue or head in self.seg.outputs:
            return "", ""
        first = self.nodes[epilogue[0]]
        if first.op != "add" or head not in first.args or len(first.args) != 2:
            return "", ""
        other = first.args[1] if first.args[0] == head else first.args[0]
        view = self.nodes[other]
        channels = self.head.shape[1]
        if view.op != "hostview" or view.attrs.get("view") != "channel" or view.shape[:1] != (channels,):
            return "", ""
        return first.name, other

    # -- kernel pieces -------------------------------------------------------------------------------

    def kernel_name(self, kind: str) -> str:
        """The Triton kernel of this segment for `kind`: gemm, direct, plane or (library path) epilogue."""
        return f"_{self.prefix}_{kind}_fwd_kernel"

    def dims(self, prefix: str) -> list[str]:
        return [f"{prefix}{i}" for i in range(self.d)]

    def origins(self) -> list[str]:
        """Lines computing, per output row, where its window starts (hoisted out of the tap loops): the
        input coordinate of tap 0 (conv) or the shifted output coordinate (transposed)."""
        at = self.head.attrs
        lines = []
        for i in range(self.d):
            s, p = at["stride"][i], at["padding"][i]
            lines.append(f"org{i} = {affine(f'o{i}', 1, p) if self.transposed else affine(f'o{i}', s, -p)}")
        return lines

    def window(self, org: list[str], taps: list[str], valid: str) -> list[str]:
        """Lines computing input coordinates i0.. from the window origins `org` at kernel taps `taps`, and
        the mask `valid` (in bounds; for a transposed conv also on the stride grid)."""
        at = self.head.attrs
        lines = []
        for i in range(self.d):
            s, dil = at["stride"][i], at["dilation"][i]
            if not self.transposed:
                lines.append(f"i{i} = {org[i]} + {affine(taps[i], dil, 0)}")
                lines.append(f"{valid} = {valid} & (i{i} >= 0) & (i{i} < I{i})")
            else:
                lines.append(f"t{i} = {org[i]} - {affine(taps[i], dil, 0)}")
                if s == 1:
                    lines.append(f"i{i} = t{i}")
                    lines.append(f"{valid} = {valid} & (t{i} >= 0) & (t{i} < I{i})")
                else:
                    lines.append(f"i{i} = t{i} // {s}")
                    lines.append(f"{valid} = {valid} & (t{i} >= 0) & (t{i} % {s} == 0) & (i{i} < I{i})")
        return lines

    def shape_params(self) -> list[str]:
        return ["M", "C_IN", "C_OUT", "CIG", "COG", "KTOT", "IS", "OS", *self.dims("I"), *self.dims("O")]

    def kernel_params(self, epi: list[str]) -> list[str]:
        return (
            [f"{t}_ptr" for t in self.pointers([self.x, self.w], epi)]
            + [f"{o}_ptr" for o in self.seg.outputs]
            + self.scalars
            + self.sizes
            + self.shape_params()
            + self.stride_args(epi)
            + [f"{k}: tl.constexpr" for k in self.dims("K")]
            + ["BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr"]
        )

    def epilogue_and_store(self, epi: list[str]) -> list[str]:
        """The epilogue on a [channels, positions] tile: positions are contiguous in memory, so the
        operand loads and the stores run along the tile's fast (last) dim."""
        lines = ["mask = mask_n[:, None] & mask_m[None, :]"]
        lines += [self.operand_load(t, "n_idx[None, :]", "co[:, None]", "s[None, :]", "mask") for t in epi]
        lines += self.epilogue_body(self.seg.nodes[0], "acc")
        if any(self.nodes[o].shape == self.head.shape for o in self.seg.outputs):
            lines.append("out_off = n_idx[None, :].to(tl.int64) * C_OUT * OS + co[:, None] * OS + s[None, :]")
        for o in self.seg.outputs:
            if self.nodes[o].shape == self.head.shape:
                lines.append(f"tl.store({o}_ptr + out_off, {self.store_value(o)}, mask=mask)")
            else:  # reduced over the channels: one value per position
                lines.append(
                    f"tl.store({o}_ptr + n_idx[None, :].to(tl.int64) * OS + s[None, :], {self.store_value(o)}, "
                    "mask=mask_m[None, :])"
                )
        return lines

    def rows(self) -> list[str]:
        return [
            "rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
            "mask_m = rm < M",
            "n_idx = rm // OS",
            "s = rm % OS",
            *coords("s", "o", self.dims("O")),
            *self.origins(),
        ]

    def precision(self) -> str:
        precision = self.genes.get("precision", "ieee")
        if precision not in PRECISIONS:
            raise UnsupportedError("conv", f"precision {precision!r} (fp32 schemes: {', '.join(PRECISIONS)})")
        return precision

    def channels_last(self) -> bool:
        layout = self.genes.get("layout", "nchw")
        if layout not in LAYOUTS:
            raise UnsupportedError("conv", f"layout {layout!r} (layouts: {', '.join(LAYOUTS)})")
        return layout == "channels_last"

    def split_k(self) -> int:
        """Programs per output tile along K (gene split_k); 1 where the epilogue reduces over the channels
        (it needs every channel's finished sum in one program)."""
        split = self.genes.get("split_k", 1)
        if split not in SPLITS:
            raise UnsupportedError("conv", f"split_k {split!r} (splits: {', '.join(map(str, SPLITS))})")
        return 1 if self.channel_reductions() else int(split)

    def k_range(self, total: str, block: str) -> str:
        """The K loop's range over 0..`total` in steps of `block`: all of it, or split program ks's share
        (whole blocks, so that the shares never overlap)."""
        if self.split_k() == 1:
            return f"range(0, {total}, {block})"
        chunk = f"tl.cdiv(tl.cdiv({total}, {block}), SPLIT_K) * {block}"
        return f"range(ks * ({chunk}), tl.minimum(ks * ({chunk}) + {chunk}, {total}), {block})"

    def x_rows(self) -> str:
        """The GEMM kernels' input base per output row (sample n_idx, group g): in the given layout, or in
        the channels-last copy the launcher passes as xcl_ptr."""
        if self.channels_last():
            return "x_rows = xcl_ptr + n_idx.to(tl.int64) * C_IN * IS + g * CIG"
        return f"x_rows = {self.x}_ptr + n_idx.to(tl.int64) * C_IN * IS + g.to(tl.int64) * CIG * IS"

    def x_offset(self, ci: str, sp: str) -> str:
        """Offset from x_rows of in-channel `ci` (of the group) at flat input position `sp`."""
        return f"({sp}) * C_IN + {ci}" if self.channels_last() else f"{ci} * IS + {sp}"

    def gemm_params(self, epi: list[str]) -> list[str]:
        cl = ["xcl_ptr"] if self.channels_last() else []
        if self.split_k() > 1:  # the GEMM writes partials only: no epilogue operands
            return (
                [f"{self.x}_ptr", f"{self.w}_ptr", "part_ptr"]
                + self.shape_params()
                + [f"{k}: tl.constexpr" for k in self.dims("K")]
                + ["BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr", "BLOCK_K: tl.constexpr", "SPLIT_K: tl.constexpr"]
                + cl
            )
        return self.kernel_params(epi) + ["BLOCK_K: tl.constexpr"] + cl

    def gemm_store(self, epi: list[str]) -> list[str]:
        """The end of a GEMM kernel, acc as [channels, positions]: the epilogue and the stores, or (split-K)
        this program's fp32 partial at part[ks, n, channel, position]."""
        if self.split_k() == 1:
            return self.epilogue_and_store(epi)
        return [
            "part_off = ks.to(tl.int64) * M * C_OUT + n_idx[None, :].to(tl.int64) * C_OUT * OS + co[:, None] * OS "
            "+ s[None, :]",
            "tl.store(part_ptr + part_off, acc, mask=mask_n[:, None] & mask_m[None, :])",
        ]

    def gemm_head(self) -> list[str]:
        """The implicit-GEMM kernels' program ids (output tile, group), their rows (output positions) with
        each row's window origin, and the tile's output channels."""
        return [
            "pid = tl.program_id(0)",
            "g = tl.program_id(1)",
            *(["ks = tl.program_id(2)  # this program's share of K"] if self.split_k() > 1 else []),
            "num_pid_n = tl.cdiv(COG, BLOCK_N)",
            "pid_m = pid // num_pid_n",
            "pid_n = pid % num_pid_n",
            *self.rows(),
            "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            "mask_n = rn < COG",
            "co = g * COG + rn",
        ]

    def subpixel_head(self) -> list[str]:
        """The sub-pixel kernels' program ids (output tile, group, stride phase), their rows (output positions
        of the phase: o = q * stride + r), each row's window origin and the tile's output channels."""
        at = self.head.attrs
        st, pad = at["stride"], at["padding"]
        d = self.d
        return [
            "pid = tl.program_id(0)",
            "g = tl.program_id(1)",
            *(
                ["phase = tl.program_id(2) // SPLIT_K", "ks = tl.program_id(2) % SPLIT_K  # this program's share of K"]
                if self.split_k() > 1
                else ["phase = tl.program_id(2)"]
            ),
            "num_pid_n = tl.cdiv(COG, BLOCK_N)",
            "pid_m = pid // num_pid_n",
            "pid_n = pid % num_pid_n",
            *coords("phase", "r", [str(v) for v in st]),
            *[f"Q{i} = (O{i} + {st[i] - 1}) // {st[i]}" for i in range(d)],
            f"QS = {' * '.join(self.dims('Q'))}",
            "rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
            "n_idx = rm // QS",
            "q = rm % QS",
            *coords("q", "q", self.dims("Q")),
            *[f"o{i} = q{i} * {st[i]} + r{i}" for i in range(d)],
            "mask_m = (rm < (M // OS) * QS)" + "".join(f" & (o{i} < O{i})" for i in range(d)),
            f"s = {flat(self.dims('o'), self.dims('O'))}",
            *[f"c{i} = (r{i} + {pad[i]}) % {st[i]}" for i in range(d)],
            *[f"org{i} = q{i} + (r{i} + {pad[i]} - c{i}) // {st[i]}" for i in range(d)],
            "rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            "mask_n = rn < COG",
            "co = g * COG + rn",
        ]

    def subpixel_kernel(self, name: str, epi: list[str]) -> list[str]:
        """Implicit GEMM of a strided transposed conv for one stride phase (program_id 2) of the outputs:
        o = q * stride + r takes taps k = c + j * stride (c = (r + pad) % stride), input i = q + e - j."""
        st = self.head.attrs["stride"]
        d = self.d
        body = [
            *self.subpixel_head(),
            f"KS = {' * '.join(self.dims('K'))}",
            *[f"J{i} = (K{i} + {st[i] - 1}) // {st[i]}" for i in range(d)],
            f"JS = {' * '.join(self.dims('J'))}",
            self.x_rows(),
            "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
            f"for kk in {self.k_range('CIG * JS', 'BLOCK_K')}:",
        ]
        # K = in-channels x taps of the phase: in-channels outer, or fastest for a channels-last input
        split = ["jt = rk // CIG", "ci = rk % CIG"] if self.channels_last() else ["ci = rk // JS", "jt = rk % JS"]
        loop = [
            "rk = kk + tl.arange(0, BLOCK_K)",
            *split,
            *coords("jt", "j", self.dims("J")),
            "mask_k = rk < CIG * JS",
        ]
        for i in range(d):
            loop += [f"k{i} = c{i} + j{i} * {st[i]}", f"mask_k = mask_k & (k{i} < K{i})"]
        loop.append("valid = mask_k[:, None] & mask_m[None, :]")
        for i in range(d):
            loop += [f"i{i} = org{i}[None, :] - j{i}[:, None]", f"valid = valid & (i{i} >= 0) & (i{i} < I{i})"]
        w_off = (
            f"(g * CIG + ci)[None, :].to(tl.int64) * COG * KS + rn[:, None] * KS "
            f"+ ({flat(self.dims('k'), self.dims('K'))})[None, :]"
        )
        sp = flat(self.dims("i"), self.dims("I"))
        loop.append(f"a = tl.load(x_rows[None, :] + {self.x_offset('ci[:, None]', sp)}, mask=valid, other=0.0)")
        return self.gemm_finish(name, epi, body, loop, w_off)

    def gemm_finish(self, name: str, epi: list[str], body: list[str], loop: list[str], w_off: str) -> list[str]:
        """The end of both implicit-GEMM kernels: the weight tile at `w_off`, the tl.dot step closing the K
        loop (`loop` has gathered the input tile `a`), then the epilogue on [channels, positions]."""
        loop += [
            f"b = tl.load({self.w}_ptr + {w_off}, mask=mask_n[:, None] & mask_k[None, :], other=0.0)",
            f'acc = tl.dot(tl.trans(a), tl.trans(b), acc, input_precision="{self.precision()}")',
        ]
        body += indent(loop, 4)
        body.append("acc = tl.trans(acc)")
        body += self.gemm_store(epi)
        return ["@triton.jit", f"def {name}({', '.join(self.gemm_params(epi))}):", *indent(body, 4)]

    def gemm_tap_kernel(self, name: str, epi: list[str]) -> list[str]:
        """Implicit GEMM with K ordered tap-major (gene k_order "tap"): an outer loop over the kernel taps works
        out each output row's input position and bounds once, as [positions] vectors; the inner loop steps
        through the group's in-channels BLOCK_K at a time, so the gathered tile is a row base plus channel
        strides and needs no per-element division. The launcher passes the weight as [C_OUT, taps, CIG]
        (contiguous along the channels). A sub-pixel (strided transposed) kernel skips the taps its stride
        phase never meets."""
        d = self.d
        if self.subpixel:
            st = self.head.attrs["stride"]
            body = self.subpixel_head()
            outer = [
                *[f"J{i} = (K{i} + {st[i] - 1}) // {st[i]}" for i in range(d)],
                f"for jt in range(0, {' * '.join(self.dims('J'))}):",
            ]
            head = [
                *coords("jt", "j", self.dims("J")),
                *[f"k{i} = c{i} + j{i} * {st[i]}" for i in range(d)],
                "valid_m = mask_m",
            ]
            for i in range(d):
                head += [f"i{i} = org{i} - j{i}", f"valid_m = valid_m & (i{i} >= 0) & (i{i} < I{i})"]
            guard = "if " + " & ".join(f"(k{i} < K{i})" for i in range(d)) + ":  # a tap of this phase"
        else:
            body = self.gemm_head()
            outer = [f"for tap in range(0, {' * '.join(self.dims('K'))}):"]
            head = [
                *coords("tap", "k", self.dims("K")),
                "valid_m = mask_m",
                *self.window(self.dims("org"), self.dims("k"), "valid_m"),
            ]
            guard = ""
        channels = [
            f"for cb in {self.k_range('CIG', 'BLOCK_K')}:",
            *indent(
                [
                    "ci = cb + tl.arange(0, BLOCK_K)",
                    "mask_k = ci < CIG",
                    f"a = tl.load(x_rows[None, :] + {self.x_offset('ci[:, None]', 'sp[None, :]')}, "
                    "mask=mask_k[:, None] & valid_m[None, :], other=0.0)",
                    "b = tl.load(w_tap[:, None] + ci[None, :], mask=mask_n[:, None] & mask_k[None, :], other=0.0)",
                    f'acc = tl.dot(tl.trans(a), tl.trans(b), acc, input_precision="{self.precision()}")',
                ],
                4,
            ),
        ]
        step = [
            *head,
            f"sp = {flat(self.dims('i'), self.dims('I'))}",
            f"w_tap = {self.w}_ptr + co.to(tl.int64) * KTOT + ({flat(self.dims('k'), self.dims('K'))}) * CIG",
        ]
        step += [guard, *indent(channels, 4)] if guard else channels
        body += [
            self.x_rows(),
            "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
            *outer,
            *indent(step, 4),
            "acc = tl.trans(acc)",
            *self.gemm_store(epi),
        ]
        return ["@triton.jit", f"def {name}({', '.join(self.gemm_params(epi))}):", *indent(body, 4)]

    def gemm_kernel(self, name: str, epi: list[str]) -> list[str]:
        if self.genes.get("k_order", "channel") == "tap":
            return self.gemm_tap_kernel(name, epi)
        if self.subpixel:
            return self.subpixel_kernel(name, epi)
        ks = " * ".join(self.dims("K"))
        body = [
            *self.gemm_head(),
            f"KS = {ks}",
            self.x_rows(),
            "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
            f"for kk in {self.k_range('KTOT', 'BLOCK_K')}:",
        ]
        # K = in-channels x taps: in-channels outer, or fastest for a channels-last input
        split = ["tap = rk // CIG", "ci = rk % CIG"] if self.channels_last() else ["ci = rk // KS", "tap = rk % KS"]
        # the input tile is gathered as [K, positions] (consecutive output positions read consecutive
        # input addresses at stride 1) and the weight tile as [channels, K] (contiguous along K)
        o = [f"org{i}[None, :]" for i in range(self.d)]
        sp = flat(self.dims("i"), self.dims("I"))
        taps = [f"k{i}[:, None]" for i in range(self.d)]
        loop = [
            "rk = kk + tl.arange(0, BLOCK_K)",
            "mask_k = rk < KTOT",
            *split,
            *coords("tap", "k", self.dims("K")),
            "valid = mask_k[:, None] & mask_m[None, :]",
            *self.window(o, taps, "valid"),
            f"a = tl.load(x_rows[None, :] + {self.x_offset('ci[:, None]', sp)}, mask=valid, other=0.0)",
        ]
        if not self.transposed:
            # the weight is [C_OUT, CIG, taps]: rk itself where K runs in-channels outer
            k = "(ci * KS + tap)" if self.channels_last() else "rk"
            w_off = f"co[:, None].to(tl.int64) * KTOT + {k}[None, :]"
        else:
            w_off = "(g * CIG + ci)[None, :].to(tl.int64) * COG * KS + rn[:, None] * KS + tap[None, :]"
        return self.gemm_finish(name, epi, body, loop, w_off)

    def direct_kernel(self, name: str, epi: list[str]) -> list[str]:
        ks = " * ".join(self.dims("K"))
        body = [
            "pid = tl.program_id(0)",
            "num_pid_n = tl.cdiv(C_OUT, BLOCK_N)",
            "pid_m = pid // num_pid_n",
            "pid_n = pid % num_pid_n",
            *self.rows(),
            "co = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
            "mask_n = co < C_OUT",
            "grp = co // COG",
            f"KS = {ks}",
            f"x_rows = {self.x}_ptr + n_idx.to(tl.int64) * C_IN * IS",
            "acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)  # [channels, positions]",
            "for ci in range(0, CIG):",
        ]
        outer = ["chan = (grp * CIG + ci).to(tl.int64) * IS", "for tap in range(0, KS):"]
        inner = [
            *coords("tap", "k", self.dims("K")),
            "valid = mask_m",
            *self.window(self.dims("org"), self.dims("k"), "valid"),
            f"sp = {flat(self.dims('i'), self.dims('I'))}",
            "a = tl.load(x_rows[None, :] + chan[:, None] + sp[None, :], "
            "mask=mask_n[:, None] & valid[None, :], other=0.0)",
        ]
        if not self.transposed:
            w_off = "co.to(tl.int64) * KTOT + ci * KS + tap"
        else:
            w_off = "(grp * CIG + ci).to(tl.int64) * COG * KS + (co - grp * COG) * KS + tap"
        inner += [
            f"wv = tl.load({self.w}_ptr + {w_off}, mask=mask_n, other=0.0)",
            "acc += a * wv[:, None]",
        ]
        body += indent(outer + indent(inner, 4), 4)
        body += self.epilogue_and_store(epi)
        return ["@triton.jit", f"def {name}({', '.join(self.kernel_params(epi))}):", *indent(body, 4)]

    def tile_dims(self) -> tuple[list[int], int | None, int]:
        """The plane kernel's split of the spatial dims: leading ones (a scalar per program), the tile's
        row dim (None for conv1d) and its column dim (the last, contiguous in memory)."""
        d = self.d
        return list(range(d - 2)), (d - 2 if d >= 2 else None), d - 1

    def plane_kernel(self, name: str, epi: list[str]) -> list[str]:
        """program_id(0): one (sample, output channel, leading spatial coordinates); program_id(1): a
        [BLOCK_N rows x BLOCK_M columns] tile of the last two spatial dims. The taps are unrolled; each
        reads a shifted window of one input plane (neighbouring taps hit the same cache lines)."""
        lead, row, col = self.tile_dims()
        body = ["plane = tl.program_id(0)", "tile = tl.program_id(1)", "p_rest = plane"]
        for i in reversed(lead):
            body += [f"o{i} = p_rest % O{i}", f"p_rest = p_rest // O{i}"]
        body += ["co = p_rest % C_OUT", "n_idx = p_rest // C_OUT", "grp = co // COG"]
        if row is None:
            body += [f"o{col} = tile * BLOCK_M + tl.arange(0, BLOCK_M)", f"mask = o{col} < O{col}"]
            shape = "(BLOCK_M,)"
        else:
            body += [
                f"tiles_c = tl.cdiv(O{col}, BLOCK_M)",
                f"o{row} = (tile // tiles_c) * BLOCK_N + tl.arange(0, BLOCK_N)[:, None]",
                f"o{col} = (tile % tiles_c) * BLOCK_M + tl.arange(0, BLOCK_M)[None, :]",
                f"mask = (o{row} < O{row}) & (o{col} < O{col})",
            ]
            shape = "(BLOCK_N, BLOCK_M)"
        body += [
            *self.origins(),
            f"s = {flat(self.dims('o'), self.dims('O'))}",
            f"x_plane = {self.x}_ptr + (n_idx.to(tl.int64) * C_IN + grp * CIG) * IS",
            f"acc = tl.zeros({shape}, dtype=tl.float32)",
            "chan = x_plane",
            "for ci in range(0, CIG):",
        ]
        tap = flat(self.dims("k"), self.dims("K"))
        ks = " * ".join(self.dims("K"))  # constexpr: the taps' flat index folds to a constant per tap
        if not self.transposed:
            w_off = f"co.to(tl.int64) * KTOT + ci * ({ks}) + {tap}"
        else:
            w_off = f"((grp * CIG + ci).to(tl.int64) * COG + co - grp * COG) * ({ks}) + {tap}"
        inner = [
            "valid = mask",
            *self.window(self.dims("org"), self.dims("k"), "valid"),
            f"a = tl.load(chan + {flat(self.dims('i'), self.dims('I'))}, mask=valid, other=0.0)",
            f"acc += a * tl.load({self.w}_ptr + {w_off})",
        ]
        for i in reversed(range(self.d)):
            inner = [f"for k{i} in tl.static_range(K{i}):", *indent(inner, 4)]
        body += indent([*inner, "chan += IS  # the group's next input channel"], 4)
        # an operand broadcast over space is one value per program (its sample and channel): a scalar load
        body += [
            self.operand_load(t, "n_idx", "co", "s", None if self.spatial_role(t) == "bcast" else "mask") for t in epi
        ]
        body += self.epilogue_body(self.seg.nodes[0], "acc")
        body.append("out_off = (n_idx.to(tl.int64) * C_OUT + co) * OS + s")
        body += [f"tl.store({o}_ptr + out_off, {self.store_value(o)}, mask=mask)" for o in self.seg.outputs]
        return ["@triton.jit", f"def {name}({', '.join(self.kernel_params(epi))}):", *indent(body, 4)]

    # -- launcher ------------------------------------------------------------------------------------

    def epilogue_launch(self, src: str, epi: list[str], extra: str = "") -> str:
        """The launch of the flat epilogue kernel over `src` (the library convolution's result, or split-K's
        partials), one program per EPILOGUE_BLOCK outputs; `extra` adds launch arguments."""
        args = [src, *epi, *self.seg.outputs, *self.scalars, *self.sizes, "M * C_OUT", "C_OUT", "OS"]
        return (
            f"{self.kernel_name('epilogue')}[(cdiv(M * C_OUT, {EPILOGUE_BLOCK}),)]"
            f"({', '.join(args + self.stride_args(epi))}, BLOCK={EPILOGUE_BLOCK}, WIDE=M * C_OUT >= 2**31{extra}, "
            "num_warps=4)"
        )

    def launcher_lines(self, epi: list[str], library: bool, algo: str) -> list[str]:
        at = self.head.attrs
        x, w = self.x, self.w
        lines = [f"{x} = {x}.contiguous()", f"{w} = {w}.contiguous()", f"N, C_IN = {x}.shape[0], {x}.shape[1]"]
        for i in range(self.d):
            lines.append(f"I{i}, K{i} = {x}.shape[{i + 2}], {w}.shape[{i + 2}]")
        if not self.transposed:
            lines += [f"C_OUT, CIG = {w}.shape[0], {w}.shape[1]", "G = C_IN // CIG", "COG = C_OUT // G"]
        else:
            lines += [f"G = {at['groups']}", "CIG = C_IN // G", f"COG = {w}.shape[1]", "C_OUT = COG * G"]
        for i in range(self.d):
            s, p, dil, op = at["stride"][i], at["padding"][i], at["dilation"][i], at["output_padding"][i]
            if not self.transposed:
                lines.append(f"O{i} = (I{i} + {2 * p} - {dil} * (K{i} - 1) - 1) // {s} + 1")
            else:
                lines.append(f"O{i} = (I{i} - 1) * {s} - {2 * p} + {dil} * (K{i} - 1) + {op} + 1")
        lines += [
            f"shape = (N, C_OUT, {', '.join(self.dims('O'))})",
            f"IS = {' * '.join(self.dims('I'))}",
            f"OS = {' * '.join(self.dims('O'))}",
            "M = N * OS",
            f"KTOT = CIG * {' * '.join(self.dims('K'))}",
        ]
        lines += self.operand_lines(epi)
        lines += self.size_lines("shape")
        for o in self.seg.outputs if not (library and self.bare) else ():
            lines.append(f"{o} = torch.empty({self.out_shape(o)}, device={x}.device, dtype={self.dtype_expr(o)})")
        g = self.genes
        common = (
            self.pointers([x, w], epi)
            + list(self.seg.outputs)
            + self.scalars
            + self.sizes
            + self.shape_params()
            + self.stride_args(epi)
            + self.dims("K")
        )
        opts = f"num_warps={g['num_warps']}, num_stages={g['num_stages']}"
        if library:
            bias = f"{self.bias}.reshape(-1)" if self.bias else "None"
            args = (
                f"{x}, {w}, {bias}, {at['stride']}, {at['padding']}, {at['dilation']}, {self.transposed}, "
                f"{at['output_padding'] if self.transposed else [0] * self.d}, G"
            )
            if self.bare:
                lines += [
                    "# hybrid policy: the library convolution (with its bias) is this step's whole result",
                    f"{self.seg.outputs[0]} = torch.convolution({args})",
                ]
            else:
                lines += [
                    "# hybrid policy: the library convolution (contiguous: a channels-last weight gives a "
                    "channels-last result), then the epilogue in one Triton pass",
                    f"conv_out = torch.convolution({args}).contiguous()",
                    self.epilogue_launch("conv_out", epi),
                ]
        else:
            bn = str(g["BLOCK_N"])
            split = self.split_k()
            if self.channel_reductions():
                bn = "bn"
                lines += [
                    f"if G != 1 or COG > {CHANNEL_TILE}:",
                    "    raise ValueError(f'a reduction over the channels in the epilogue needs groups 1 and at most "
                    f"{CHANNEL_TILE} channels, got {{G}} and {{COG}}: the plan was made for the declared sizes "
                    "of the operator, this is not one of them')",
                    "bn = max(16, next_power_of_2(COG))  # one tile spans every channel",
                ]
            if self.subpixel:
                strides = at["stride"]
                lines.append(
                    "MQ = N * "
                    + " * ".join(f"cdiv(O{i}, {strides[i]})" for i in range(self.d))
                    + "  # outputs per stride phase (rounded up)"
                )
                phases = 1
                for v in strides:
                    phases *= v
                grid = f"(cdiv(MQ, {g['BLOCK_M']}) * cdiv(COG, {bn}), G, {phases * split})"
            else:
                grid = f"(cdiv(M, {g['BLOCK_M']}) * cdiv(COG, {bn}), G{f', {split}' if split > 1 else ''})"
            gemm_args, gemm = common, []
            if split > 1:  # the GEMM writes fp32 partials; the epilogue kernel adds them up
                gemm_args = [x, w, "part", *self.shape_params(), *self.dims("K")]
                gemm.append(f"part = torch.empty(({split}, M * C_OUT), device={x}.device, dtype=torch.float32)")
            if g.get("k_order", "channel") == "tap":
                # the weight as [C_OUT, taps, CIG]: each tap's in-channels contiguous for the tap-major K loop
                gemm_args = ["wk" if a == w else a for a in gemm_args]
                if not self.transposed:
                    taps = ", ".join(str(i + 2) for i in range(self.d))
                    gemm.append(f"wk = {w}.permute(0, {taps}, 1).contiguous()")
                else:  # (C_IN, COG, *taps) = (G, CIG, COG, taps) -> (G, COG, taps, CIG)
                    taps = " * ".join(self.dims("K"))
                    gemm.append(f"wk = {w}.reshape(G, CIG, COG, {taps}).permute(0, 2, 3, 1).contiguous()")
            blocks = f"BLOCK_M={g['BLOCK_M']}, BLOCK_N={bn}, BLOCK_K={g['BLOCK_K']}"
            if split > 1:
                blocks += f", SPLIT_K={split}"
            if self.channels_last():
                spatial = ", ".join(str(i + 2) for i in range(self.d))
                gemm.append(f"xcl = {x}.permute(0, {spatial}, 1).contiguous()  # in-channels contiguous")
                blocks += ", xcl_ptr=xcl"
            gemm.append(f"{self.kernel_name('gemm')}[{grid}]({', '.join(gemm_args)}, {blocks}, {opts})")
            if split > 1:
                gemm.append(self.epilogue_launch("part", epi, f", SPLIT_K={split}"))
            direct = (
                f"{self.kernel_name('direct')}[(cdiv(M, {g['BLOCK_M']}) * cdiv(C_OUT, block_n),)]"
                f"({', '.join(common)}, BLOCK_M={g['BLOCK_M']}, BLOCK_N=block_n, {opts})"
            )
            block_n = f"block_n = min({g['BLOCK_N']}, next_power_of_2(C_OUT))"
            lead, row, col = self.tile_dims()
            planes = " * ".join(["N", "C_OUT", *(f"O{i}" for i in lead)])
            plane = [f"bm = min({g['BLOCK_M']}, next_power_of_2(O{col}))"]
            if row is None:
                plane.append("bn = 1")
                tiles = f"cdiv(O{col}, bm)"
            else:
                plane.append(f"bn = min({g['BLOCK_N']}, next_power_of_2(O{row}))")
                tiles = f"cdiv(O{row}, bn) * cdiv(O{col}, bm)"
            launch = f"({', '.join(common)}, BLOCK_M=bm, BLOCK_N=bn, {opts})"
            plane.append(f"{self.kernel_name('plane')}[({planes}, {tiles})]{launch}")
            if algo == "plane":
                lines += plane
            elif algo == "gemm":
                lines += gemm
            elif algo == "direct":
                lines += [block_n, direct]
            else:
                lines += [
                    f"if COG >= {GEMM_MIN_CHANNELS} and KTOT >= {GEMM_MIN_CHANNELS}:",
                    *indent(gemm, 4),
                    "elif CIG == 1:  # depthwise: one input channel per output channel",
                    *indent(plane, 4),
                    "else:",
                    f"    {block_n}",
                    f"    {direct}",
                ]
        lines.append(f"return {', '.join(self.seg.outputs)}")
        return [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]


__all__ = ["ConvEmitter", "ChannelEpilogue", "PRECISIONS", "ALGOS", "Any"]
