"""Export to Parquet and import: same content in a fresh file, idempotent merges, origins kept."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from experience_factories import GPU, candidate, layernorm_sig, rejected, softmax_sig, spec, verified
from foundry.experience import (
    ExperienceError,
    ExperienceStore,
    HintDef,
    HintResult,
    SchemaTooNewError,
    export_parquet,
    import_parquet,
)
from foundry.experience.rows import TABLES

HINT_TIMES = {"created_at", "updated_at"}  # seed rows are stamped when each file first loads its seeds


def content(store: ExperienceStore) -> dict[str, list[dict]]:
    out = {}
    for table in TABLES:
        rows = [r.model_dump(exclude=HINT_TIMES if table == "hints" else None) for r in store.read_table(table)]
        out[table] = rows
    return out


def populated(path: Path, repo: str, prefix: str) -> ExperienceStore:
    store = ExperienceStore(path)
    run = store.start_run(spec("softmax"), softmax_sig(), repo=repo, gpu=GPU, run_id=f"{prefix}-run")
    run.record(spec(), candidate(f"{prefix}-a", source=f"# {prefix} a\n"), verified(f"{prefix}-a", speedup=1.5))
    run.record(spec(), candidate(f"{prefix}-b", source=f"# {prefix} b\n"), rejected(f"{prefix}-b"))
    run.finish("improved", applied_hints={"online-softmax": HintResult(success=True, speedup=1.5)})
    store.add_hint(HintDef(id=f"{prefix}-learned", title="learned", suggestion="from a run"), origin=repo)
    return store


def test_export_then_import_into_a_fresh_file_gives_the_same_content(tmp_path: Path) -> None:
    source = populated(tmp_path / "a.duckdb", "acme/llm", "a")
    report = export_parquet(source, tmp_path / "lib.parquet")
    assert report.rows["candidates"] == 2 and report.rows["runs"] == 1 and report.rows["hint_uses"] == 1
    table = pq.read_table(tmp_path / "lib.parquet")
    assert table.column_names == ["table", "key", "origin", "row"]
    assert table.schema.metadata[b"format"] == b"kernel-foundry-experience"
    # exports move between machines: the metadata names the format and schema, no local path
    assert set(table.schema.metadata) == {b"format", b"schema_version"}
    assert not any(str(tmp_path).encode() in value for value in table.schema.metadata.values())

    fresh = ExperienceStore(tmp_path / "fresh.duckdb")
    imported = import_parquet(fresh, tmp_path / "lib.parquet")
    assert imported.added["candidates"] == 2 and imported.added["hints"] == 1  # the seeds were there already
    assert content(fresh) == content(source)
    retrieved = fresh.retrieve_for(softmax_sig(), k=3, gpu=GPU)
    assert [k.candidate.source for k in retrieved.kernels] == ["# a a\n"]


def test_importing_twice_adds_nothing_and_origins_are_kept(tmp_path: Path) -> None:
    populated(tmp_path / "a.duckdb", "acme/llm", "a")
    export_parquet(ExperienceStore(tmp_path / "a.duckdb"), tmp_path / "a.parquet")
    local = populated(tmp_path / "b.duckdb", "local/repo", "b")

    first = import_parquet(local, tmp_path / "a.parquet")
    # same operator signature and an equally fast best kernel: only the other library's own records are new
    assert first.added == {"signatures": 0, "hints": 1, "runs": 1, "candidates": 2, "hint_uses": 1, "best_kernels": 0}
    before = content(local)
    second = import_parquet(local, tmp_path / "a.parquet")
    assert second.total_added == 0 and second.improved_best == 0
    assert content(local) == before

    origins = {r.candidate_id: r.origin_repo for r in local.read_table("candidates")}
    assert origins == {"a-a": "acme/llm", "a-b": "acme/llm", "b-a": "local/repo", "b-b": "local/repo"}
    assert {r.run_id: r.origin_repo for r in local.read_table("runs")} == {"a-run": "acme/llm", "b-run": "local/repo"}
    hint_origins = {r.hint_id: r.origin for r in local.read_table("hints") if r.origin != "seed"}
    assert hint_origins == {"a-learned": "acme/llm", "b-learned": "local/repo"}
    uses = {(r.run_id, r.hint_id): r.origin_repo for r in local.read_table("hint_uses")}
    assert uses == {("a-run", "online-softmax"): "acme/llm", ("b-run", "online-softmax"): "local/repo"}
    online = next(s for s in local.hint_stats() if s.definition.id == "online-softmax")
    assert (online.tries, online.successes) == (2, 2)  # merged experience reinforces the same hint


def test_import_keeps_the_faster_best_kernel(tmp_path: Path) -> None:
    slow = ExperienceStore(tmp_path / "slow.duckdb", seeds=())
    run = slow.start_run(spec(), softmax_sig(), gpu=GPU, run_id="slow")
    run.record(spec(), candidate("s"), verified("s", speedup=1.2))
    fast = ExperienceStore(tmp_path / "fast.duckdb", seeds=())
    run = fast.start_run(spec(), softmax_sig(), repo="elsewhere/repo", gpu=GPU, run_id="fast")
    run.record(spec(), candidate("f", source="# faster\n"), verified("f", speedup=2.2))
    norm = fast.start_run(spec("layernorm"), layernorm_sig(), gpu=GPU, run_id="norm")
    norm.record(spec("layernorm"), candidate("n"), verified("n", speedup=1.1))
    export_parquet(fast, tmp_path / "fast.parquet")
    export_parquet(slow, tmp_path / "slow.parquet")

    report = import_parquet(slow, tmp_path / "fast.parquet")
    assert report.improved_best == 1 and report.added["best_kernels"] == 1
    best = {b.operator: b for b in slow.best_kernels()}
    assert best["softmax"].speedup == pytest.approx(2.2) and best["softmax"].origin_repo == "elsewhere/repo"
    assert import_parquet(fast, tmp_path / "slow.parquet").improved_best == 0  # a slower one never replaces
    assert {b.operator: b.speedup for b in fast.best_kernels()}["softmax"] == pytest.approx(2.2)


def test_bad_export_files_are_reported(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ExperienceError, match="not a readable Parquet"):
        import_parquet(store, tmp_path / "junk.parquet")
    export_parquet(store, tmp_path / "ok.parquet")
    table = pq.read_table(tmp_path / "ok.parquet")
    pq.write_table(table.replace_schema_metadata({"format": "kernel-foundry-experience", "schema_version": "99"}),
                   tmp_path / "newer.parquet")  # fmt: skip
    with pytest.raises(SchemaTooNewError, match="schema version 99"):
        import_parquet(store, tmp_path / "newer.parquet")
    pq.write_table(table.replace_schema_metadata({"format": "something-else"}), tmp_path / "other.parquet")
    with pytest.raises(ExperienceError, match="not an experience-library export"):
        import_parquet(store, tmp_path / "other.parquet")
