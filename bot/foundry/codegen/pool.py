"""N-d max / average pooling (1d/2d/3d: kernel, stride, padding, dilation) with its pointwise epilogue.

One lane per output element over the flat (N, C, *out spatial) output; the window's taps are unrolled
(tl.static_range over the literal kernel sizes), padding is masked (-inf for max, 0 for average). Average
pooling divides by the window size (count_include_pad=True), by the number of in-bounds taps
(count_include_pad=False), or by divisor_override. Only floor-mode output sizes (ceil_mode=False).

Pointwise ops before the pool whose results nothing else reads (a prologue: a norm's scale and shift, an
activation) are computed per tap from their operands at input coordinates, so the pooled tensor itself
never goes through memory; padded taps are masked after the prologue.

Further pools of the same tensor in memory with the same output shape (max and average pooling of one input)
join the kernel: each accumulates its own window in the same lane, and the epilogue combines them.
"""

from __future__ import annotations

from foundry.codegen.conv import ChannelEpilogue, affine, coords, flat, nc_positions
from foundry.codegen.ir import UnsupportedError
from foundry.codegen.kernels import Emitted, indent


class PoolEmitter(ChannelEpilogue):
    def siblings(self) -> list[str]:
        """Further pools of the head's input with the head's output shape (the planner joins them): each
        runs its own window in the same lane, and the epilogue combines them (max + avg pooling)."""
        return [n for n in self.seg.nodes[self.head_index() + 1 :] if self.nodes[n].op == "pool"]

    def epilogue_nodes(self) -> list[str]:
        return [n for n in super().epilogue_nodes() if self.nodes[n].op != "pool"]

    def pooled(
        self, name: str, tag: str, prologue: list[str], pro: list[str], in_base: tuple[int, ...]
    ) -> tuple[list[str], str]:
        """Lines accumulating pool node `name` over its window (accumulator acc{tag}; the input rows x_rows,
        or per tap the prologue over `pro`), and the expression of its value."""
        at = self.nodes[name].attrs
        x = self.nodes[name].args[0]
        d = len(self.nodes[name].shape) - 2
        dims_i = [f"I{i}" for i in range(d)]
        acc, cnt = f"acc{tag}", f"cnt{tag}"
        is_max = at["mode"] == "max"
        identity = "-float('inf')" if is_max else "0.0"
        body = [f"{acc} = tl.full([BLOCK], {identity}, dtype=tl.float32)"]
        count = at["mode"] == "avg" and not at["count_include_pad"] and at["divisor"] is None
        if count:
            body.append(f"{cnt} = tl.zeros([BLOCK], dtype=tl.float32)")
        # nested unrolled loops over the window, one level per spatial dim
        nest: list[str] = []
        depth = 0
        valid = "mask"
        for i in range(d):
            k, s, p, dil = at["kernel"][i], at["stride"][i], at["padding"][i], at["dilation"][i]
            nest += indent(
                [
                    f"for k{i} in tl.static_range({k}):",
                    f"    i{i} = {affine(f'o{i}', s, -p)} + {affine(f'k{i}', dil, 0)}",
                    f"    v{i} = {valid} & (i{i} >= 0) & (i{i} < I{i})",
                ],
                depth,
            )
            valid = f"v{i}"
            depth += 4
        spatial = flat([f"i{i}" for i in range(d)], dims_i)
        if prologue:
            inner = [f"sp = {spatial}"]
            inner += [self.operand_load(t, "n", "c", "sp", valid, "p", in_base) for t in pro]
            inner += [self.statement(n) for n in prologue]
            inner.append(f"v = tl.where({valid}, {x}, {identity})")
        else:
            load = f"tl.load(x_rows + {spatial}, mask={valid}, other={identity})"
            inner = [f"v = {self.load_cast(load, x)}"]
        inner.append(f"{acc} = tl.maximum({acc}, v)" if is_max else f"{acc} += v")
        if count:
            inner.append(f"{cnt} += tl.where({valid}, 1.0, 0.0)")
        nest += indent(inner, depth)
        body += nest
        if is_max:
            value = acc
        elif at["divisor"] is not None:
            value = f"{acc} / {float(at['divisor'])!r}"
        elif count:
            value = f"{acc} / tl.maximum({cnt}, 1.0)"  # lanes past the end count no taps
        else:
            window = 1
            for k in at["kernel"]:
                window *= k
            value = f"{acc} / {float(window)!r}"
        return body, value

    def emit(self) -> Emitted:
        head_name = self.seg.nodes[self.head_index()]
        head = self.nodes[head_name]
        at = head.attrs
        d = len(head.shape) - 2
        x = head.args[0]
        prologue = self.prologue_nodes()
        epi = self.epilogue_tensors()
        # with a prologue, the pooled value is computed per tap from these tensors (at input coordinates)
        pro = self.tensors_of(prologue) if prologue else [x]
        in_base = self.nodes[x].shape
        src = next((t for t in pro if self.nodes[t].shape == in_base), None)
        if src is None:
            raise UnsupportedError("pool", "no operand of the pooled tensor's full shape")
        dims_i = [f"I{i}" for i in range(d)]
        dims_o = [f"O{i}" for i in range(d)]
        name = f"_{self.prefix}_fwd_kernel"
        ptrs = self.pointers(pro, epi)
        pro_strides = self.stride_args(pro, "p") if prologue else []
        params = (
            [f"{t}_ptr" for t in ptrs]
            + [f"{o}_ptr" for o in self.seg.outputs]
            + self.scalars
            + self.sizes
            + ["TOTAL", "C", "IS", "OS", *dims_i, *dims_o]
            + pro_strides
            + self.stride_args(epi)
            + ["BLOCK: tl.constexpr", "WIDE: tl.constexpr"]
        )
        body = [*nc_positions(), *coords("s", "o", dims_o)]
        if not prologue:
            body.append(f"x_rows = {x}_ptr + nc.to(tl.int64) * IS")
        lines, value = self.pooled(head_name, "", prologue, pro, in_base)
        body += lines
        siblings = []
        for k, sib in enumerate(self.siblings(), start=1):
            lines, sib_value = self.pooled(sib, f"_{k}", [], [], in_base)
            body += lines
            siblings.append(f"{sib} = {sib_value}")
        body += [self.operand_load(t, "n", "c", "s", "mask") for t in epi]
        body += siblings
        body += self.epilogue_body(head_name, value)
        body += [f"tl.store({o}_ptr + offs, {self.store_value(o)}, mask=mask)" for o in self.seg.outputs]
        kernel = ["@triton.jit", f"def {name}({', '.join(params)}):", *indent(body, 4)]

        lines = [f"{src} = {src}.contiguous()", f"N, C = {src}.shape[0], {src}.shape[1]"]
        for i in range(d):
            k, s, p, dil = at["kernel"][i], at["stride"][i], at["padding"][i], at["dilation"][i]
            lines.append(f"I{i} = {src}.shape[{i + 2}]")
            lines.append(f"O{i} = (I{i} + {2 * p} - {dil * (k - 1)} - 1) // {s} + 1")
        lines += [
            f"in_shape = (N, C, {', '.join(dims_i)})",
            f"shape = (N, C, {', '.join(dims_o)})",
            f"IS = {' * '.join(dims_i)}",
            f"OS = {' * '.join(dims_o)}",
            "TOTAL = N * C * OS",
        ]
        if prologue:
            lines += self.operand_lines(pro, "in_shape", "p", in_base)
        lines += self.operand_lines(epi)
        lines += self.size_lines("shape")
        for o in self.seg.outputs:
            lines.append(f"{o} = torch.empty(shape, device={src}.device, dtype={self.dtype_expr(o)})")
        call = (
            ptrs
            + list(self.seg.outputs)
            + self.scalars
            + self.sizes
            + ["TOTAL", "C", "IS", "OS", *dims_i, *dims_o]
            + pro_strides
            + self.stride_args(epi)
        )
        block = self.genes["BLOCK_SIZE"]
        lines.append(
            f"{name}[(cdiv(TOTAL, {block}),)]({', '.join(call)}, BLOCK={block}, WIDE=TOTAL >= 2**31, "
            f"num_warps={self.genes['num_warps']})"
        )
        lines.append(f"return {', '.join(self.seg.outputs)}")
        launcher = [f"def {self.launcher}({', '.join(self.launcher_params())}):", *indent(lines, 4)]
        return Emitted(
            "\n".join(kernel), "\n".join(launcher), self.launcher, self.tensors, self.scalars, self.seg.outputs, [name]
        )


__all__ = ["PoolEmitter"]
