# cheat: first-order gradients wrong exactly where a gradient penalty reads them. Under create_graph=True (grad mode
#        on inside backward) the RoPE backward hands off to a second autograd.Function whose forward returns the
#        input gradient rotated the wrong way (the forward's rotation R dy instead of R^T dy: the classic RoPE
#        backward sign bug) while its own backward, the second derivative R c, is right. Every create_graph=False
#        call takes the plain, correct Triton path. A gradient penalty, an input-gradient regulariser or MAML's
#        inner step through this layer reads dx's wrong values.
# operator: rt9_rope_train
# expect: mismatch
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _rotate(a_ptr, cos_ptr, sin_ptr, out_ptr, seq, half, TRANSPOSE: tl.constexpr, BLOCK: tl.constexpr):
    # out = a * cos + rotate_half(a) * sin (R a), or its transpose (R^T a); one row (a position) per program
    row = tl.program_id(0)
    t = row % seq
    cols = tl.arange(0, BLOCK)
    mask = cols < half
    base = row * 2 * half
    a1 = tl.load(a_ptr + base + cols, mask=mask)
    a2 = tl.load(a_ptr + base + half + cols, mask=mask)
    c1 = tl.load(cos_ptr + t * 2 * half + cols, mask=mask)
    c2 = tl.load(cos_ptr + t * 2 * half + half + cols, mask=mask)
    s1 = tl.load(sin_ptr + t * 2 * half + cols, mask=mask)
    s2 = tl.load(sin_ptr + t * 2 * half + half + cols, mask=mask)
    if TRANSPOSE:
        tl.store(out_ptr + base + cols, a1 * c1 + a2 * s2, mask=mask)
        tl.store(out_ptr + base + half + cols, a2 * c2 - a1 * s1, mask=mask)
    else:
        tl.store(out_ptr + base + cols, a1 * c1 - a2 * s1, mask=mask)
        tl.store(out_ptr + base + half + cols, a2 * c2 + a1 * s2, mask=mask)


def _apply(a, cos, sin, transpose):
    seq, dim = cos.shape
    a2 = a.contiguous()
    out = torch.empty_like(a2)
    rows = a2.numel() // dim
    _rotate[(rows,)](
        a2, cos.contiguous(), sin.contiguous(), out, seq, dim // 2, TRANSPOSE=transpose,
        BLOCK=triton.next_power_of_2(dim // 2),
    )
    return out


class RopeBackward(torch.autograd.Function):
    """dy -> dx, itself differentiable: the double backward's graph."""

    @staticmethod
    def forward(ctx, dy, cos, sin):
        ctx.save_for_backward(cos, sin)
        return _apply(dy, cos, sin, False)  # the cheat: R dy, where the gradient is R^T dy

    @staticmethod
    def backward(ctx, c):
        cos, sin = ctx.saved_tensors
        return _apply(c, cos, sin, False), None, None  # d<R^T dy, c>/d dy = R c: right


class Rope(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, cos, sin):
        ctx.save_for_backward(cos, sin)
        return _apply(x, cos, sin, False)

    @staticmethod
    def backward(ctx, dy):
        cos, sin = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True: a gradient penalty is being built
            return RopeBackward.apply(dy, cos, sin), None, None
        return _apply(dy, cos, sin, True), None, None


class ModelNew(nn.Module):
    def __init__(self, seq: int, dim: int):
        super().__init__()
        inv = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        freqs = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, x):
        return Rope.apply(x, self.cos, self.sin)
