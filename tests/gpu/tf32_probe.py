"""How far an honest TF32 Triton matmul lands from the checker's class reference, on a GPU.

The class reference (evaluator.ClassRounding with tf32_rounded) rounds each operand of a product to TF32 to nearest
and sums in fp32; Triton's default tf32 `tl.dot` may truncate operands instead. Under a tf32 class every element
may differ from the reference by CLASS_NOISE_FACTOR x the class reference's gap plus k class epsilons of the terms
(|A| @ |B|); a k that honest TF32 needs is the widest a bf16-operand kernel may also pass. This prints, per shape,
the fraction of elements outside `2 |class - truth| + k eps |A||B|` for honest TF32 (Triton default, cuBLAS TF32)
and for bf16 operands, for several k.

    python3 tests/gpu/tf32_probe.py [OUT.json]
"""

from __future__ import annotations

import json
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, "bot")
from foundry.evaluate.evaluator import CLASS_NOISE_FACTOR, PRECISION_EPS, tf32_rounded  # noqa: E402

KS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 32.0)


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, BF16: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if BF16:
            acc += tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16))
        else:
            acc += tl.dot(a, b)  # the default input precision: tf32 on sm_80+
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def triton_mm(a: torch.Tensor, b: torch.Tensor, bf16: bool) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.float32)
    _mm[(triton.cdiv(M, 64), triton.cdiv(N, 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32, BF16=bf16)
    return c


def outside(err: torch.Tensor, gap: torch.Tensor, terms: torch.Tensor, eps: float) -> dict[str, float]:
    return {str(k): float((err > CLASS_NOISE_FACTOR * gap + k * eps * terms).double().mean()) for k in KS}


def main() -> None:
    eps = PRECISION_EPS["tf32"]
    rows = []
    for m, k, n, dist in [
        (512, 32, 512, "normal"),
        (512, 256, 512, "normal"),
        (256, 4096, 256, "normal"),
        (512, 256, 512, "rows apart"),
        (512, 256, 512, "offset"),
    ]:
        g = torch.Generator(device="cuda").manual_seed(k + m)
        a = torch.randn(m, k, device="cuda", generator=g)
        b = torch.randn(k, n, device="cuda", generator=g)
        if dist == "rows apart":
            a = a * torch.exp(3.0 * torch.rand(m, 1, device="cuda", generator=g) - 1.5)
        elif dist == "offset":
            a = a + 3.0
        truth = a.double() @ b.double()
        terms = a.double().abs() @ b.double().abs()
        klass = tf32_rounded(a).double() @ tf32_rounded(b).double()
        gap = (klass - truth).abs()
        torch.backends.cuda.matmul.allow_tf32 = True
        cublas = (a @ b).double()
        torch.backends.cuda.matmul.allow_tf32 = False
        trunc = (a.view(torch.int32) & ~0x1FFF).view(torch.float32).double() @ (
            (b.view(torch.int32) & ~0x1FFF).view(torch.float32).double()
        )
        results = {
            "triton tf32": triton_mm(a, b, False).double(),
            "cublas tf32": cublas,
            "truncated operands (fp64 sum)": trunc,
            "triton bf16 operands": triton_mm(a, b, True).double(),
        }
        row = {"shape": [m, k, n], "inputs": dist, "class gap / (eps terms) max": float((gap / (eps * terms)).max())}
        for name, c in results.items():
            err = (c - truth).abs()
            row[name] = {
                "err / (eps terms) max": float((err / (eps * terms)).max()),
                "err / (eps terms) p99.9": float(torch.quantile((err / (eps * terms)).flatten()[:1_000_000], 0.999)),
                "fraction outside 2 gap + k eps terms": outside(err, gap, terms, eps),
            }
        rows.append(row)
        print(json.dumps(row, indent=1))
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(
                {
                    "torch": torch.__version__,
                    "triton": triton.__version__,
                    "gpu": torch.cuda.get_device_name(),
                    "rows": rows,
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
