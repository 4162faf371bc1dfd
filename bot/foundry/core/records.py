"""Frozen, serializable records: what flows between the evaluator, the writers and the optimizer.

Every failure of a candidate is data (a Diagnosis), never an exception.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

EVIDENCE_LIMIT = 2000  # characters of evidence kept per diagnosis


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stage(StrEnum):
    WRITER = "writer"
    STATIC = "static"
    LOAD = "load"
    RUN = "run"
    CORRECTNESS = "correctness"
    RUNTIME_GUARD = "runtime_guard"
    TIMING = "timing"
    COMPILE = "compile"


class FailureKind(StrEnum):
    STATIC_GUARD = "static_guard"  # the AST guard refused the source
    COMPILE_ERROR = "compile_error"  # syntax, import or Triton compile failure
    RUNTIME_ERROR = "runtime_error"  # an exception raised by the candidate
    CRASH = "crash"  # killed by a signal: segfault, illegal memory access, abort
    EARLY_EXIT = "early_exit"  # sys.exit / os._exit before the verdict
    TIMEOUT = "timeout"
    OOM = "oom"
    OUTPUT_FLOOD = "output_flood"
    OUTPUT_TYPE = "output_type"  # not a plain tensor (subclass, list, …)
    SHAPE_MISMATCH = "shape_mismatch"  # shape, dtype or stride sanity
    INCOMPLETE_OUTPUT = "incomplete_output"  # NaN poison survived: elements never written
    MISMATCH = "mismatch"  # numerics outside tolerance
    ALIASING = "aliasing"  # output shares memory with an input or a parameter
    INPUT_MUTATION = "input_mutation"
    STATE_DEPENDENT = "state_dependent"  # result depends on call count or buffer addresses
    RUNTIME_GUARD = "runtime_guard"  # non-Triton compute, no launch, threads, streams
    TIMING_ANOMALY = "timing_anomaly"  # events disagree with wall clock, work escapes the stream
    RESOURCE_LIMIT = "resource_limit"  # shared memory over the limit, register spills (static compile)
    UNSUPPORTED = "unsupported"  # the writer cannot express this operator
    WRITER_ERROR = "writer_error"  # the writer produced nothing usable (garbled LLM reply, …)


class Diagnosis(Record):
    stage: Stage
    kind: FailureKind
    message: str
    rule: str | None = None  # the named guard rule or check that fired
    line: int | None = None  # line in the candidate source, when known
    evidence: str = ""
    metrics: dict[str, float] = Field(default_factory=dict)

    @field_validator("evidence")
    @classmethod
    def _cap_evidence(cls, value: str) -> str:
        if len(value) <= EVIDENCE_LIMIT:
            return value
        half = EVIDENCE_LIMIT // 2
        return value[:half] + f"\n… [{len(value) - EVIDENCE_LIMIT} characters cut] …\n" + value[-half:]

    def headline(self) -> str:
        where = f" (rule {self.rule}" + (f", line {self.line})" if self.line else ")") if self.rule else ""
        if not self.rule and self.line:
            where = f" (line {self.line})"
        return f"[{self.stage}/{self.kind}]{where} {self.message}"


class KernelFacts(Record):
    """Compile-time facts of one Triton kernel, from Triton's compiled metadata."""

    name: str
    registers: int | None = None
    spills: int | None = None
    shared_bytes: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None
    target: str = ""


class Roofline(Record):
    bytes_moved: int
    flops: int
    floor_ms: float
    pct_of_floor: float  # floor time / measured time, in percent
    bound: str  # memory | compute | latency
    bandwidth_gbs: float
    peak_tflops: float


class TimingRun(Record):
    """One timing run of a finalist's re-verification: the candidate in a worker process of its own and the
    reference (eager, torch.compile) in the evaluator, on fresh inputs."""

    candidate_ms: float
    eager_ms: float | None = None
    compile_ms: float | None = None


class PeakMemory(Record):
    """Device memory at the peak of one call beyond what was allocated before it (MiB): outputs and workspaces,
    and in a training step the tensors saved for backward and the gradients."""

    candidate_mib: float | None = None
    eager_mib: float | None = None
    compile_mib: float | None = None


class TrainingTiming(Record):
    """A training operator's step, forward and backward (from fixed upstream gradients, inputs and parameters
    requiring grad), timed as the forward is: the candidate in its worker, eager and torch.compile in the
    evaluator, on the same shapes."""

    candidate_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    memory: PeakMemory | None = None

    @property
    def speedup_eager(self) -> float | None:
        return self.eager_ms / self.candidate_ms if self.candidate_ms and self.eager_ms else None

    @property
    def speedup_compile(self) -> float | None:
        return self.compile_ms / self.candidate_ms if self.candidate_ms and self.compile_ms else None


class Timing(Record):
    measured: bool
    reason: str = ""  # why not measured
    device: str = ""
    trials: int = 0
    candidate_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    roofline: Roofline | None = None
    baseline_notes: tuple[str, ...] = ()  # how eager and torch.compile were run (TF32 off, compile failed …)
    runs: tuple[TimingRun, ...] = ()  # a finalist's timing runs; the times above are then their medians
    host_ms: float | None = None  # the host's time to enqueue one call of the candidate (kept out of candidate_ms)
    memory: PeakMemory | None = None  # the forward's peak memory (inference: under no_grad)
    training: TrainingTiming | None = None  # forward + backward, for a training operator

    @property
    def speedup_eager(self) -> float | None:
        if self.candidate_ms and self.eager_ms:
            return self.eager_ms / self.candidate_ms
        return None

    @property
    def speedup_compile(self) -> float | None:
        if self.candidate_ms and self.compile_ms:
            return self.compile_ms / self.candidate_ms
        return None

    @property
    def host_bound(self) -> bool:
        """The host takes longer to enqueue one call than the device takes to run it."""
        return self.host_ms is not None and bool(self.candidate_ms) and self.host_ms > self.candidate_ms


class OperatorSpec(Record):
    """What the bot knows about an operator without holding the live module."""

    path: str
    class_name: str = "Model"
    name: str  # slug used for branches and file names
    dtype: str = "float32"
    precision: str = "fp32"  # tolerance class from rules/tolerance.yaml
    hybrid_ops: tuple[str, ...] = ()  # aten ops allowed outside Triton in the hybrid policy
    training: bool = False  # checked for training too: gradients of inputs and parameters (FOUNDRY_TRAINING)
    input_shapes: tuple[tuple[int, ...], ...] = ()  # configured: random inputs of these shapes (else get_inputs)
    input_dtype: str | None = None  # configured: the floating inputs' dtype (a torch dtype name)
    source_hash: str = ""

    @property
    def ref(self) -> str:
        return f"{self.path}::{self.class_name}"


class Candidate(Record):
    id: str
    source: str
    writer: str = "manual"
    expert: str = ""
    island: int = 0
    generation: int = 0
    parent_id: str | None = None
    genes: dict[str, int | float | str | bool] = Field(default_factory=dict)
    notes: str = ""


class Verdict(Record):
    candidate_id: str
    verified: bool
    policy: str
    device: str
    diagnoses: tuple[Diagnosis, ...] = ()  # the first is the reason for rejection
    warnings: tuple[Diagnosis, ...] = ()
    checks_passed: tuple[str, ...] = ()
    trials: int = 0
    triton_launches: int = 0
    library_ops: tuple[str, ...] = ()  # aten ops that ran outside Triton (hybrid policy)
    kernels: tuple[KernelFacts, ...] = ()
    timing: Timing | None = None
    wall_s: float = 0.0

    @property
    def failure(self) -> Diagnosis | None:
        return self.diagnoses[0] if self.diagnoses else None


class IslandSummary(Record):
    island: int
    expert: str
    evaluated: int = 0
    verified: int = 0
    best_candidate_id: str | None = None
    best_speedup: float | None = None  # over eager; None when timing was not measured
    best_score: float | None = None  # what selection used (speedup, or the static cost model on CPU)
    failures: dict[str, int] = Field(default_factory=dict)  # FailureKind → count


class GenerationPoint(Record):
    generation: int
    island: int
    evaluated: int
    verified: int
    best_speedup: float | None = None
    best_score: float | None = None


class ExperienceNote(Record):
    """What the experience library contributed to a run."""

    retrieved_hints: tuple[str, ...] = ()
    retrieved_kernels: tuple[str, ...] = ()  # candidate ids seeded into generation 0
    helped: bool | None = None  # did the best lineage start from retrieved material?
    summary: str = ""


class RunReport(Record):
    """Everything `foundry optimize` learned; report.json is this record, report.md its rendering."""

    operator: OperatorSpec
    verified: bool
    policy: str
    writer: str
    device: str  # e.g. "NVIDIA H200" or "cpu (Triton interpreter)"
    torch_version: str
    triton_version: str
    timing_measured: bool
    best: Candidate | None = None
    best_verdict: Verdict | None = None
    budget: int = 0
    evaluated: int = 0
    wall_s: float = 0.0
    islands: tuple[IslandSummary, ...] = ()
    history: tuple[GenerationPoint, ...] = ()
    failures: dict[str, int] = Field(default_factory=dict)
    experience: ExperienceNote = Field(default_factory=ExperienceNote)
    notes: tuple[str, ...] = ()
    started_at: str = ""

    @property
    def timing(self) -> Timing | None:
        return self.best_verdict.timing if self.best_verdict else None
