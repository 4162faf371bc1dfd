"""Records for experience-library tests: signatures, specs, candidates and verdicts as the optimizer
would produce them. Also runnable as a writer process: `python experience_factories.py write …`."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from foundry.core.records import (
    Candidate,
    Diagnosis,
    FailureKind,
    KernelFacts,
    OperatorSpec,
    Roofline,
    Stage,
    Timing,
    Verdict,
)
from foundry.experience import ExperienceStore, OpSignature, TensorInfo

GPU = "NVIDIA H200"


def tensor(*shape: int, dtype: str = "float32") -> TensorInfo:
    return TensorInfo(dtype=dtype, shape=shape)


def softmax_sig(rows: int = 4096, cols: int = 8192, dtype: str = "float32") -> OpSignature:
    return OpSignature(ops=("softmax",), dtype=dtype, inputs=(tensor(rows, cols, dtype=dtype),),
                       outputs=(tensor(rows, cols, dtype=dtype),))  # fmt: skip


def manual_softmax_sig(rows: int = 2048, cols: int = 4096) -> OpSignature:
    return OpSignature(ops=("amax", "sub", "exp", "sum", "div"), inputs=(tensor(rows, cols),),
                       outputs=(tensor(rows, cols),))  # fmt: skip


def layernorm_sig(rows: int = 4096, cols: int = 1024) -> OpSignature:
    return OpSignature(ops=("native_layer_norm",), inputs=(tensor(rows, cols),),
                       params=(tensor(cols), tensor(cols)), outputs=(tensor(rows, cols),))  # fmt: skip


def linear_relu_sig(m: int = 4096, k: int = 1024, n: int = 4096) -> OpSignature:
    return OpSignature(ops=("t", "addmm", "relu"), inputs=(tensor(m, k),), params=(tensor(n, k), tensor(n)),
                       outputs=(tensor(m, n),))  # fmt: skip


def spec(name: str = "softmax", dtype: str = "float32") -> OperatorSpec:
    return OperatorSpec(path=f"ops/{name}.py", name=name, dtype=dtype, source_hash=f"hash-{name}")


def candidate(cid: str, *, source: str | None = None, parent: str | None = None, **genes: object) -> Candidate:
    return Candidate(
        id=cid,
        source=source if source is not None else f"# kernel {cid}\nimport triton\n",
        writer="template",
        expert="memory_access",
        parent_id=parent,
        genes=dict(genes or {"BLOCK_SIZE": 1024}),
    )


def verified(cid: str, *, speedup: float | None = 2.0, device: str = GPU, spills: int = 0) -> Verdict:
    timing = Timing(measured=False, reason="no CUDA")
    if speedup is not None:
        timing = Timing(
            measured=True, device=device, trials=50, candidate_ms=1.0, eager_ms=speedup, compile_ms=1.5,
            roofline=Roofline(bytes_moved=1 << 28, flops=1 << 20, floor_ms=0.5, pct_of_floor=50.0,
                              bound="memory", bandwidth_gbs=4000.0, peak_tflops=60.0),
        )  # fmt: skip
    return Verdict(
        candidate_id=cid, verified=True, policy="strict", device=device, trials=3, triton_launches=1,
        kernels=(KernelFacts(name="_k", registers=64, spills=spills),), timing=timing,
    )  # fmt: skip


def rejected(cid: str, kind: FailureKind = FailureKind.MISMATCH, device: str = GPU) -> Verdict:
    diagnosis = Diagnosis(stage=Stage.CORRECTNESS, kind=kind, message="max abs error 3e-2 at [0, 17]")
    return Verdict(candidate_id=cid, verified=False, policy="strict", device=device, diagnoses=(diagnosis,))


def write_records(db: str, run_id: str, count: int, flush_every: int, start_file: str | None) -> None:
    """A writer process: one run, `count` candidates (every 5th verified), committed in groups."""
    if start_file:
        while not Path(start_file).exists():  # all writers start at once
            time.sleep(0.005)
    store = ExperienceStore(db, seeds=())
    session = store.start_run(spec(f"op-{run_id}"), softmax_sig(), repo=f"repo/{run_id}", gpu=GPU, run_id=run_id,
                              flush_every=flush_every)  # fmt: skip
    for i in range(count):
        cid = f"{run_id}-{i}"
        verdict = verified(cid, speedup=1.0 + i / count) if i % 5 == 0 else rejected(cid)
        session.record(spec(), candidate(cid, source=f"# {cid}\n"), verdict)
        if flush_every == 1:
            print(f"committed {cid}", flush=True)
    session.finish("improved")


if __name__ == "__main__":
    _, _, db, run_id, count, flush_every, *rest = sys.argv
    write_records(db, run_id, int(count), int(flush_every), rest[0] if rest else None)
