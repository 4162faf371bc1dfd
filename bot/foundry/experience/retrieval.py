"""What a search gets from the library: the most similar verified kernels and the hints whose triggers
match, ranked. Pure ranking over rows already read; the store does the reading."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from foundry.core.protocols import Hint
from foundry.core.records import Candidate, ExperienceNote
from foundry.experience.hints import DiagnosisFacts, HintDef, hint_score
from foundry.experience.rows import CandidateRow
from foundry.experience.signature import OpSignature, similarity

log = logging.getLogger(__name__)

MIN_SIMILARITY = 0.55  # below this a kernel is for another kind of operator
SPEEDUP_WEIGHT = 0.25  # per doubling of speedup over eager, capped at two doublings
SAME_GPU_BONUS = 0.1
SAME_DTYPE_BONUS = 0.05
RETRIEVED_PREFIX = "lib-"
DIAGNOSIS_WEIGHT = 1.5  # a hint answering the lineage's current diagnosis goes before general advice


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RetrievedKernel(Frozen):
    candidate: Candidate  # ready to seed generation 0: id "lib-…", genes and source of the stored kernel
    uid: str  # the stored candidate's uid
    similarity: float
    score: float
    speedup: float | None
    gpu: str
    dtype: str
    operator: str
    origin_repo: str
    signature_key: str


class RetrievedHint(Frozen):
    hint: Hint
    title: str
    context: str
    score: float
    tries: int
    successes: int
    mean_speedup: float | None
    needs_diagnosis: bool


class Retrieval(Frozen):
    kernels: tuple[RetrievedKernel, ...] = ()
    hints: tuple[RetrievedHint, ...] = ()
    # similar kernels left out because their module cannot be built or loaded for this operator: why, each
    unfit: tuple[str, ...] = ()

    def candidates(self) -> tuple[Candidate, ...]:
        return tuple(k.candidate for k in self.kernels)

    def hint_records(self) -> tuple[Hint, ...]:
        return tuple(h.hint for h in self.hints)

    def summary(self) -> str:
        parts = []
        if self.kernels:
            best = self.kernels[0]
            speed = f", {best.speedup:.2f}x" if best.speedup else ""
            parts.append(
                f"{len(self.kernels)} similar verified kernel(s) (best: {best.operator} from "
                f"{best.origin_repo}, similarity {best.similarity:.2f}{speed})"
            )
        if self.hints:
            parts.append(f"{len(self.hints)} hint(s): " + ", ".join(h.hint.id for h in self.hints))
        summary = "retrieved " + "; ".join(parts) if parts else "the experience library had nothing similar"
        if self.unfit:
            summary += (
                f"; {len(self.unfit)} similar kernel(s) left out: their constructor or state_dict does not fit "
                "this operator"
            )
        return summary

    def note(self, helped: bool | None = None) -> ExperienceNote:
        return ExperienceNote(
            retrieved_hints=tuple(h.hint.id for h in self.hints),
            retrieved_kernels=tuple(k.candidate.id for k in self.kernels),
            helped=helped,
            summary=self.summary(),
        )


def retrieved_id(uid: str) -> str:
    return f"{RETRIEVED_PREFIX}{uid[:12]}"


def kernel_score(sim: float, speedup: float | None, same_gpu: bool, same_dtype: bool) -> float:
    gain = 0.0
    if speedup is not None and speedup > 1.0:
        gain = SPEEDUP_WEIGHT * min(math.log2(speedup), 2.0)
    return sim * (1.0 + gain) + (SAME_GPU_BONUS if same_gpu else 0.0) + (SAME_DTYPE_BONUS if same_dtype else 0.0)


def rank_kernels(
    signature: OpSignature,
    rows: Iterable[tuple[CandidateRow, OpSignature]],
    k: int,
    *,
    gpu: str | None = None,
    min_similarity: float = MIN_SIMILARITY,
    unfit: list[str] | None = None,
) -> tuple[RetrievedKernel, ...]:
    """Best first; one kernel per distinct source. A kernel whose module cannot be built with this operator's
    constructor arguments or load its state_dict (OpSignature.misfit) would only fail at load and cost a
    candidate: it is left out, and why is appended to `unfit`."""
    scored: list[RetrievedKernel] = []
    cache: dict[str, float] = {}
    misfits: dict[str, str | None] = {}
    for row, stored in rows:
        sim = cache.get(stored.key)
        if sim is None:
            sim = cache[stored.key] = similarity(signature, stored)
        if sim < min_similarity:
            continue
        if stored.key not in misfits:
            misfits[stored.key] = signature.misfit(stored)
        if misfits[stored.key] is not None:
            why = f"{retrieved_id(row.uid)} ({row.operator}, {row.origin_repo}): {misfits[stored.key]}"
            log.info("experience: left out %s", why)
            if unfit is not None:
                unfit.append(why)
            continue
        score = kernel_score(sim, row.speedup, gpu is not None and row.gpu == gpu, row.dtype == signature.dtype)
        speed = f"{row.speedup:.2f}x over eager on {row.gpu}" if row.speedup else f"verified on {row.gpu}"
        candidate = Candidate(
            id=retrieved_id(row.uid),
            source=row.source,
            writer=row.writer,
            expert=row.expert,
            generation=0,
            genes=json.loads(row.genes),
            notes=(f"from the experience library: {row.operator} ({row.origin_repo}), similarity {sim:.2f}, {speed}"),
        )
        scored.append(
            RetrievedKernel(
                candidate=candidate,
                uid=row.uid,
                similarity=sim,
                score=round(score, 6),
                speedup=row.speedup,
                gpu=row.gpu,
                dtype=row.dtype,
                operator=row.operator,
                origin_repo=row.origin_repo,
                signature_key=row.signature_key,
            )
        )
    scored.sort(key=lambda r: (-r.score, -(r.speedup or 0.0), r.uid))
    out: list[RetrievedKernel] = []
    seen: set[str] = set()
    for kernel in scored:
        digest = kernel.candidate.source
        if digest in seen:
            continue
        seen.add(digest)
        out.append(kernel)
        if len(out) == k:
            break
    return tuple(out)


class HintStats(Frozen):
    definition: HintDef
    origin: str
    tries: int = 0
    successes: int = 0
    mean_speedup: float | None = None

    @property
    def score(self) -> float:
        specificity = self.definition.trigger.specificity()
        return hint_score(self.definition.prior, self.tries, self.successes, self.mean_speedup, specificity)


def rank_hints(
    stats: Iterable[HintStats],
    signature: OpSignature | None,
    facts: DiagnosisFacts | None,
    k: int,
    *,
    expert: str | None = None,
) -> tuple[RetrievedHint, ...]:
    """Hints whose trigger holds, best score first. With an expert, only hints for that role or for any."""
    matched: list[tuple[float, HintStats]] = []
    for stat in stats:
        d = stat.definition
        if expert is not None and d.context not in ("", expert):
            continue
        if not d.trigger.matches(signature, facts):
            continue
        weight = DIAGNOSIS_WEIGHT if d.trigger.needs_diagnosis else 1.0
        matched.append((stat.score * weight, stat))
    matched.sort(key=lambda pair: (-pair[0], pair[1].definition.id))
    return tuple(
        RetrievedHint(
            hint=Hint(
                id=s.definition.id,
                suggestion=s.definition.suggestion,
                genes=dict(s.definition.genes),
                source="seed" if s.origin == "seed" else "library",
            ),
            title=s.definition.title,
            context=s.definition.context,
            score=round(score, 6),
            tries=s.tries,
            successes=s.successes,
            mean_speedup=s.mean_speedup,
            needs_diagnosis=s.definition.trigger.needs_diagnosis,
        )
        for score, s in matched[:k]
    )
