"""Statistics and leaderboards of a library, as records (the CLI renders them)."""

from __future__ import annotations

import json

import duckdb
from pydantic import BaseModel, ConfigDict

from foundry.experience.db import first
from foundry.experience.retrieval import HintStats
from foundry.experience.signature import OpSignature
from foundry.experience.store import ExperienceStore


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LibraryStats(Frozen):
    path: str
    schema_version: int
    file_bytes: int
    runs: int
    outcomes: dict[str, int]
    candidates: int
    verified: int
    signatures: int
    families: dict[str, int]  # signature family → signatures
    hints: int
    seed_hints: int
    hint_uses: int
    best_kernels: int
    repositories: dict[str, int]  # origin repository → candidates


class TopKernel(Frozen):
    operator: str
    family: str
    signature: str
    gpu: str
    dtype: str
    speedup: float | None
    origin_repo: str
    candidate_uid: str
    genes: dict[str, int | float | str | bool]


class TopHint(Frozen):
    id: str
    title: str
    context: str
    origin: str
    tries: int
    successes: int
    mean_speedup: float | None
    score: float


class Top(Frozen):
    kernels: tuple[TopKernel, ...]
    hints: tuple[TopHint, ...]


def _grouped(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, int]:
    return {str(k): int(v) for k, v in con.execute(sql).fetchall()}


def library_stats(store: ExperienceStore) -> LibraryStats:
    def work(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
        one = lambda sql: int(first(con.execute(sql))[0])  # noqa: E731
        return {
            "schema_version": store.db.schema_version(con),
            "runs": one("SELECT count(*) FROM runs"),
            "outcomes": _grouped(con, "SELECT outcome, count(*) FROM runs GROUP BY 1 ORDER BY 2 DESC"),
            "candidates": one("SELECT count(*) FROM candidates"),
            "verified": one("SELECT count(*) FROM candidates WHERE verified"),
            "signatures": one("SELECT count(*) FROM signatures"),
            "families": _grouped(con, "SELECT family, count(*) FROM signatures GROUP BY 1 ORDER BY 2 DESC, 1"),
            "hints": one("SELECT count(*) FROM hints"),
            "seed_hints": one("SELECT count(*) FROM hints WHERE origin = 'seed'"),
            "hint_uses": one("SELECT count(*) FROM hint_uses"),
            "best_kernels": one("SELECT count(*) FROM best_kernels"),
            "repositories": _grouped(con, "SELECT origin_repo, count(*) FROM candidates GROUP BY 1 ORDER BY 2 DESC, 1"),
        }

    values = store.db.run(work)
    size = store.path.stat().st_size if store.path.exists() else 0
    return LibraryStats(path=str(store.path), file_bytes=size, **values)


def top_hint(stat: HintStats) -> TopHint:
    d = stat.definition
    return TopHint(
        id=d.id,
        title=d.title,
        context=d.context,
        origin=stat.origin,
        tries=stat.tries,
        successes=stat.successes,
        mean_speedup=stat.mean_speedup,
        score=round(stat.score, 4),
    )


def library_top(store: ExperienceStore, n: int = 10) -> Top:
    """The fastest best kernels, and the hints that helped most (tried ones by score, then the rest)."""
    bests = store.best_kernels(n)
    kernels = []
    for row in bests:
        signature: OpSignature | None = store.signature(row.signature_key)
        kernels.append(
            TopKernel(
                operator=row.operator,
                family=signature.family if signature else "?",
                signature=signature.describe() if signature else row.signature_key,
                gpu=row.gpu,
                dtype=row.dtype,
                speedup=row.speedup,
                origin_repo=row.origin_repo,
                candidate_uid=row.candidate_uid,
                genes=json.loads(row.genes),
            )
        )
    stats = store.hint_stats()
    stats.sort(key=lambda s: (s.tries == 0, -s.score, s.definition.id))
    return Top(kernels=tuple(kernels), hints=tuple(top_hint(s) for s in stats[:n]))
