"""The store on real DuckDB files: location, schema versions, refusals, seeds, runs, reinforcement."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest
from experience_factories import GPU, candidate, rejected, softmax_sig, spec, verified
from foundry.core.errors import FatalError
from foundry.experience import (
    SCHEMA_VERSION,
    CorruptLibraryError,
    ExperienceStore,
    HintDef,
    HintResult,
    SchemaTooNewError,
    default_path,
    load_seed_hints,
)
from foundry.experience.hints import Trigger
from foundry.experience.schema import MIGRATIONS, Migration

SOFTMAX_HINTS = (
    HintDef(id="online", title="Online", suggestion="one pass", trigger=Trigger(classes_any=["softmax"]), prior=0.5),
    HintDef(
        id="rows",
        title="Rows",
        suggestion="row per program",
        trigger=Trigger(classes_any=["reduction"]),
        genes={"BLOCK_SIZE": 4096},
        prior=0.5,
    ),  # fmt: skip
    HintDef(id="spills", title="Spills", suggestion="shrink", trigger=Trigger(spills=True)),
)


def hint_ids(store: ExperienceStore, **kw) -> list[str]:
    return [h.hint.id for h in store.retrieve_for(softmax_sig(), k=10, **kw).hints]


def test_default_path_follows_env_then_xdg_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOUNDRY_EXPERIENCE_DB", str(tmp_path / "env.duckdb"))
    assert default_path() == tmp_path / "env.duckdb"
    assert ExperienceStore().path == tmp_path / "env.duckdb"
    assert ExperienceStore(tmp_path / "explicit.duckdb").path == tmp_path / "explicit.duckdb"
    monkeypatch.delenv("FOUNDRY_EXPERIENCE_DB")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "kernel-foundry" / "experience.duckdb"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_path() == Path(os.environ["HOME"]) / ".cache" / "kernel-foundry" / "experience.duckdb"
    store = ExperienceStore(seeds=())
    assert store.count("runs") == 0  # created, with its directory
    assert store.path.is_file()


def test_new_file_gets_the_current_schema(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    assert store.schema_version() == SCHEMA_VERSION
    for table in ("runs", "candidates", "hints", "hint_uses", "best_kernels", "signatures"):
        assert store.count(table) == 0


def test_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "lib.duckdb"
    ExperienceStore(path, seeds=()).count("runs")
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    con.close()
    before = path.read_bytes()
    store = ExperienceStore(path, seeds=())
    with pytest.raises(SchemaTooNewError, match=f"schema version {SCHEMA_VERSION + 1}.*newer Kernel Foundry") as err:
        store.count("runs")
    assert isinstance(err.value, FatalError)
    with pytest.raises(SchemaTooNewError):
        store.start_run(spec(), softmax_sig())
    assert path.read_bytes() == before


def test_older_schema_is_migrated_forward(tmp_path: Path) -> None:
    path = tmp_path / "lib.duckdb"
    old = ExperienceStore(path, seeds=())
    old.start_run(spec(), softmax_sig(), run_id="r1")
    extra = Migration(SCHEMA_VERSION + 1, "runs remember the runner", ("ALTER TABLE runs ADD COLUMN runner VARCHAR",))
    new = ExperienceStore(path, seeds=(), migrations=(*MIGRATIONS, extra))
    assert new.schema_version() == SCHEMA_VERSION + 1
    assert new.db.run(lambda con: con.execute("SELECT run_id, runner FROM runs").fetchall()) == [("r1", None)]
    with pytest.raises(SchemaTooNewError):  # and the older bot now refuses the file
        ExperienceStore(path, seeds=()).count("runs")


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: os.urandom(len(data)),  # garbage
        lambda data: b"",  # emptied
        lambda data: data[:8] + b"\0" * 16 + data[24:],  # header magic destroyed
    ],
    ids=["garbage", "empty", "header"],
)
def test_corrupt_file_is_reported_and_never_replaced(tmp_path: Path, damage) -> None:
    path = tmp_path / "lib.duckdb"
    ExperienceStore(path, seeds=()).start_run(spec(), softmax_sig(), run_id="r1")
    broken = damage(path.read_bytes())
    path.write_bytes(broken)
    store = ExperienceStore(path, seeds=())
    with pytest.raises(CorruptLibraryError, match="left untouched") as err:
        store.start_run(spec(), softmax_sig(), run_id="r2")
    assert str(path) in str(err.value) and "FOUNDRY_EXPERIENCE_DB" in str(err.value)
    assert path.read_bytes() == broken
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".duckdb") == ["lib.duckdb"]


def test_foreign_duckdb_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales (id INTEGER)")
    con.close()
    with pytest.raises(CorruptLibraryError, match="not a Kernel Foundry experience library"):
        ExperienceStore(path, seeds=()).count("runs")
    con = duckdb.connect(str(path))
    assert [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()] == ["sales"]
    con.close()


def test_seed_loading_is_idempotent_and_keeps_statistics(tmp_path: Path) -> None:
    path = tmp_path / "lib.duckdb"
    seeds = load_seed_hints()
    store = ExperienceStore(path)  # the shipped seeds, loaded on first use
    assert store.count("hints") == len(seeds)
    assert store.load_seeds() == (0, 0)
    assert ExperienceStore(path).count("hints") == len(seeds)  # another process opening it: nothing new

    session = store.start_run(spec(), softmax_sig(), run_id="r1")
    session.finish("improved", applied_hints={"online-softmax": HintResult(success=True, speedup=1.5)})
    changed = [h.model_copy(update={"suggestion": h.suggestion + " (revised)"}) if h.id == "online-softmax" else h
               for h in seeds]  # fmt: skip
    changed.append(HintDef(id="new-practice", title="New", suggestion="something new"))
    revised = ExperienceStore(path, seeds=changed)
    assert revised.count("hints") == len(seeds) + 1
    stats = {s.definition.id: s for s in revised.hint_stats()}
    assert stats["online-softmax"].definition.suggestion.endswith("(revised)")
    assert (stats["online-softmax"].tries, stats["online-softmax"].successes) == (1, 1)
    assert revised.load_seeds() == (0, 0)


def test_learned_hints_keep_their_origin(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=SOFTMAX_HINTS)
    learned = HintDef(id="learned-exp2", title="exp2", suggestion="use exp2", trigger=Trigger(ops_any=["softmax"]))
    assert store.add_hint(learned, origin="acme/models")
    assert not store.add_hint(learned, origin="other/repo")
    origins = {s.definition.id: s.origin for s in store.hint_stats()}
    assert origins["learned-exp2"] == "acme/models" and origins["online"] == "seed"
    retrieved = {h.hint.id: h.hint.source for h in store.retrieve_for(softmax_sig(), k=10).hints}
    assert retrieved == {"online": "seed", "rows": "seed", "learned-exp2": "library"}


def test_reinforcement_raises_successful_hints_and_down_weights_failing_ones(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=SOFTMAX_HINTS)
    assert hint_ids(store) == ["online", "rows"]  # equal priors: alphabetical

    for i in range(4):  # "online" keeps failing
        s = store.start_run(spec(), softmax_sig(), run_id=f"fail{i}")
        s.finish("no_gain", applied_hints={"online": HintResult(success=False, speedup=0.9)})
    assert hint_ids(store) == ["rows", "online"]
    online = next(h for h in store.retrieve_for(softmax_sig(), k=10).hints if h.hint.id == "online")
    assert (online.tries, online.successes) == (4, 0)
    assert online.mean_speedup == pytest.approx(0.9)

    for i in range(2):  # "rows" helps, twice, with a speedup
        s = store.start_run(spec(), softmax_sig(), run_id=f"ok{i}")
        s.finish("improved", applied_hints={"rows": HintResult(success=True, speedup=2.0 + i)})
    ranked = store.retrieve_for(softmax_sig(), k=10).hints
    assert [h.hint.id for h in ranked] == ["rows", "online"]
    rows, online = ranked
    assert rows.score > 2 * online.score
    assert (rows.tries, rows.successes, rows.mean_speedup) == (2, 2, pytest.approx(2.5))
    assert hint_ids(store)[:1] == ["rows"] and len(hint_ids(store)) == 2


def test_reinforcement_counts_one_use_per_run(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=SOFTMAX_HINTS)
    session = store.start_run(spec(), softmax_sig(), run_id="r1")
    results = {"online": HintResult(success=True, speedup=1.3), "no-such-hint": HintResult(success=True)}
    session.finish("improved", applied_hints=results)
    store.finish_run("r1", outcome="improved", evaluated=0, verified=0, hint_results=results)  # again
    assert store.count("hint_uses") == 1


def test_diagnosis_hints_come_with_facts(tmp_path: Path) -> None:
    from foundry.experience import facts_from_verdict

    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=SOFTMAX_HINTS)
    session = store.start_run(spec(), softmax_sig(), run_id="r1")
    hints, _ = session.retrieve(spec(), 5)
    assert "spills" not in [h.id for h in hints]
    assert [h.id for h in session.hints_for(facts_from_verdict(verified("c", spills=8)), k=5)] == [
        "spills", "online", "rows",
    ]  # fmt: skip
    assert store.run_row("r1").retrieved_hints == '["online", "rows"]'


def test_session_records_candidates_and_best_kernel(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    session = store.start_run(spec(), softmax_sig(), repo="acme/models", commit="abc123", gpu=GPU, budget=8,
                              run_id="r1")  # fmt: skip
    session.record(spec(), candidate("c1"), rejected("c1"))
    session.record(spec(), candidate("c2", parent="c1"), verified("c2", speedup=1.2))
    session.record(spec(), candidate("c3", parent="c2", BLOCK_SIZE=2048), verified("c3", speedup=1.8))
    session.record(spec(), candidate("c4", parent="c3"), verified("c4", speedup=1.5))
    assert store.best_kernels()[0].speedup == pytest.approx(1.8)
    # the re-verified best replaces its own verdict; a faster re-measurement raises the best
    note = session.finish("improved", best=candidate("c3", parent="c2", BLOCK_SIZE=2048),
                          best_verdict=verified("c3", speedup=1.9))  # fmt: skip
    assert note.helped is None  # nothing was retrieved
    rows = {r.candidate_id: r for r in store.read_table("candidates")}
    assert set(rows) == {"c1", "c2", "c3", "c4"}
    assert rows["c1"].failure_kind == "mismatch" and rows["c1"].failure_stage == "correctness"
    assert "max abs error" in rows["c1"].diagnosis
    assert rows["c3"].speedup == pytest.approx(1.9) and rows["c3"].parent_id == "c2"
    assert rows["c3"].genes == '{"BLOCK_SIZE": 2048}' and rows["c3"].bound == "memory"
    assert all(r.origin_repo == "acme/models" and r.gpu == GPU for r in rows.values())
    best = store.best_kernels()
    assert len(best) == 1 and best[0].speedup == pytest.approx(1.9) and best[0].candidate_uid == rows["c3"].uid
    run = store.run_row("r1")
    assert (run.outcome, run.evaluated, run.verified, run.best_speedup) == ("improved", 4, 3, pytest.approx(1.9))
    assert run.commit_sha == "abc123" and run.budget == 8 and run.finished_at is not None


def test_best_kernel_is_per_signature_gpu_and_dtype(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    cpu = store.start_run(spec(), softmax_sig(), run_id="cpu", gpu="cpu (Triton interpreter)")
    cpu.record(spec(), candidate("a"), verified("a", speedup=None, device="cpu (Triton interpreter)"))
    h200 = store.start_run(spec(), softmax_sig(), run_id="h200", gpu=GPU)
    h200.record(spec(), candidate("b"), verified("b", speedup=1.4))
    h200.record(spec(), candidate("c"), verified("c", speedup=1.1))
    half = store.start_run(spec(dtype="float16"), softmax_sig(dtype="float16"), run_id="half", gpu=GPU)
    half.record(spec(dtype="float16"), candidate("d"), verified("d", speedup=3.0))
    best = {(b.gpu, b.dtype): b for b in store.best_kernels()}
    assert set(best) == {("cpu (Triton interpreter)", "float32"), (GPU, "float32"), (GPU, "float16")}
    assert best[("cpu (Triton interpreter)", "float32")].speedup is None  # verified, not timed
    assert best[(GPU, "float32")].speedup == pytest.approx(1.4)
    assert [b.speedup for b in store.best_kernels(2)] == [pytest.approx(3.0), pytest.approx(1.4)]


def test_crashed_run_is_marked(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    with pytest.raises(RuntimeError, match="boom"):
        with store.start_run(spec(), softmax_sig(), run_id="r1") as session:
            session.record(spec(), candidate("c1"), verified("c1"))
            raise RuntimeError("boom")
    run = store.run_row("r1")
    assert run.outcome == "crashed" and run.evaluated == 1
    assert store.count("candidates") == 1


def test_hint_uses_are_inferred_from_the_candidates_that_applied_them(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=SOFTMAX_HINTS)
    session = store.start_run(spec(), softmax_sig(), run_id="r1", gpu=GPU)
    hints, _ = session.retrieve(spec(), 5)
    assert {h.id for h in hints} == {"online", "rows"}

    def noted(cid: str, notes: str, parent: str | None = None):
        return candidate(cid, parent=parent, BLOCK_SIZE=4096).model_copy(update={"notes": notes})

    session.record(spec(), noted("a", "warm start from hint rows"), rejected("a"))  # "rows": a failed try
    session.record(spec(), noted("b", "mutation (memory_access genes)", parent="a"), verified("b", speedup=1.6))
    session.record(spec(), noted("c", "warm start from hint online"), rejected("c"))  # "online": failed
    session.record(spec(), noted("d", "warm start from hint online"), verified("d", speedup=None))  # untimed
    session.record(spec(), noted("e", "defaults; see rows-of-text"), verified("e", speedup=1.2))  # names nothing
    best = noted("b", "mutation (memory_access genes)", parent="a")
    note = session.finish("improved", best=best, best_verdict=verified("b", speedup=1.6))
    assert note.helped is True  # an applied retrieved hint succeeded (through a's child b)
    stats = {s.definition.id: s for s in store.hint_stats()}
    assert (stats["rows"].tries, stats["rows"].successes, stats["rows"].mean_speedup) == (1, 1, pytest.approx(1.6))
    assert (stats["online"].tries, stats["online"].successes) == (1, 0)
    assert stats["spills"].tries == 0  # never offered in this run

    explicit = store.start_run(spec(), softmax_sig(), run_id="r2", gpu=GPU)
    explicit.retrieve(spec(), 5)
    explicit.record(spec(), noted("f", "warm start from hint rows"), verified("f", speedup=1.3))
    explicit.finish("improved", applied_hints={"rows": HintResult(success=False, speedup=0.95)})  # optimizer wins
    rows = next(s for s in store.hint_stats() if s.definition.id == "rows")
    assert (rows.tries, rows.successes) == (2, 1)


def test_an_older_bot_does_not_roll_seed_texts_back(tmp_path: Path) -> None:
    path = tmp_path / "lib.duckdb"
    newer = [h.model_copy(update={"suggestion": "newer text"}) if h.id == "online" else h for h in SOFTMAX_HINTS]
    ExperienceStore(path, seeds=newer).count("hints")
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '99.0.0' WHERE key = 'seeds_by'")  # loaded by a newer bot
    con.close()
    older = (*SOFTMAX_HINTS, HintDef(id="only-in-old", title="Old", suggestion="an old seed"))
    store = ExperienceStore(path, seeds=older)
    texts = {s.definition.id: s.definition.suggestion for s in store.hint_stats()}
    assert texts["online"] == "newer text"  # kept
    assert "only-in-old" in texts  # but a missing seed is still added
