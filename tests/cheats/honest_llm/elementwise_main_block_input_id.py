# honest: variables named `input` and `id`, a trailing `if __name__ == "__main__":` self-test block
# operator: elementwise_chain
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sigmoid_gate_kernel(input_ptr, weight_ptr, bias_ptr, output_ptr, numel, C, BLOCK: tl.constexpr):
    id = tl.program_id(0)
    offs = id * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    input = tl.load(input_ptr + offs, mask=mask, other=0.0)
    c = offs % C
    w = tl.load(weight_ptr + c, mask=mask, other=0.0)
    b = tl.load(bias_ptr + c, mask=mask, other=0.0)
    z = input * w + b
    sig = 1.0 / (1.0 + tl.exp(-z))
    tl.store(output_ptr + offs, input * sig + 0.5 * input, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, input):
        input = input.contiguous()
        output = torch.empty_like(input)
        numel = input.numel()
        BLOCK = 64
        grid = (triton.cdiv(numel, BLOCK),)
        sigmoid_gate_kernel[grid](input, self.weight, self.bias, output, numel, input.shape[-1], BLOCK=BLOCK)
        return output


if __name__ == "__main__":
    torch.manual_seed(0)
    channels = 16
    model = ModelNew(channels)
    x = torch.randn(6, channels)
    out = model(x)
    ref = x * torch.sigmoid(x * model.weight + model.bias) + 0.5 * x
    print("max abs diff:", (out - ref).abs().max().item())
    print("match:", torch.allclose(out, ref, atol=1e-5))
