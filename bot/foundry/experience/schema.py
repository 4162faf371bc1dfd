"""The versioned schema of the experience library and its migrations.

Version N of the schema is what migrations 1..N produce, in order; the version a file has is kept in
meta.schema_version. A file with a newer version than this bot knows is refused (SchemaTooNewError);
an older one is migrated forward, one transaction per migration. Never edit a released migration:
append a new one and bump nothing else (SCHEMA_VERSION follows the last migration).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


INITIAL = (
    """CREATE TABLE meta (
        key VARCHAR PRIMARY KEY,
        value VARCHAR NOT NULL
    )""",
    """CREATE TABLE signatures (
        key VARCHAR PRIMARY KEY,
        family VARCHAR NOT NULL,
        dtype VARCHAR NOT NULL,
        body VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE runs (
        run_id VARCHAR PRIMARY KEY,
        origin_repo VARCHAR NOT NULL,
        commit_sha VARCHAR NOT NULL,
        operator VARCHAR NOT NULL,
        operator_path VARCHAR NOT NULL,
        source_hash VARCHAR NOT NULL,
        signature_key VARCHAR NOT NULL,
        gpu VARCHAR NOT NULL,
        dtype VARCHAR NOT NULL,
        torch_version VARCHAR NOT NULL,
        triton_version VARCHAR NOT NULL,
        bot_version VARCHAR NOT NULL,
        budget INTEGER NOT NULL,
        started_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP,
        outcome VARCHAR NOT NULL,
        evaluated INTEGER NOT NULL,
        verified INTEGER NOT NULL,
        best_candidate_uid VARCHAR,
        best_speedup DOUBLE,
        retrieved_hints VARCHAR NOT NULL,
        retrieved_kernels VARCHAR NOT NULL,
        helped BOOLEAN,
        notes VARCHAR NOT NULL
    )""",
    """CREATE TABLE candidates (
        uid VARCHAR PRIMARY KEY,
        run_id VARCHAR NOT NULL,
        candidate_id VARCHAR NOT NULL,
        origin_repo VARCHAR NOT NULL,
        signature_key VARCHAR NOT NULL,
        operator VARCHAR NOT NULL,
        source_hash VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        writer VARCHAR NOT NULL,
        expert VARCHAR NOT NULL,
        island INTEGER NOT NULL,
        generation INTEGER NOT NULL,
        parent_id VARCHAR,
        genes VARCHAR NOT NULL,
        verified BOOLEAN NOT NULL,
        policy VARCHAR NOT NULL,
        gpu VARCHAR NOT NULL,
        dtype VARCHAR NOT NULL,
        failure_kind VARCHAR,
        failure_stage VARCHAR,
        diagnosis VARCHAR,
        candidate_ms DOUBLE,
        eager_ms DOUBLE,
        compile_ms DOUBLE,
        speedup DOUBLE,
        bound VARCHAR,
        pct_of_floor DOUBLE,
        spills INTEGER,
        registers INTEGER,
        recorded_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE hints (
        hint_id VARCHAR PRIMARY KEY,
        origin VARCHAR NOT NULL,
        title VARCHAR NOT NULL,
        context VARCHAR NOT NULL,
        trigger VARCHAR NOT NULL,
        suggestion VARCHAR NOT NULL,
        genes VARCHAR NOT NULL,
        prior DOUBLE NOT NULL,
        content_hash VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE hint_uses (
        run_id VARCHAR NOT NULL,
        hint_id VARCHAR NOT NULL,
        origin_repo VARCHAR NOT NULL,
        success BOOLEAN NOT NULL,
        speedup DOUBLE,
        used_at TIMESTAMP NOT NULL,
        PRIMARY KEY (run_id, hint_id)
    )""",
    """CREATE TABLE best_kernels (
        signature_key VARCHAR NOT NULL,
        gpu VARCHAR NOT NULL,
        dtype VARCHAR NOT NULL,
        candidate_uid VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL,
        origin_repo VARCHAR NOT NULL,
        operator VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        source_hash VARCHAR NOT NULL,
        genes VARCHAR NOT NULL,
        speedup DOUBLE,
        candidate_ms DOUBLE,
        updated_at TIMESTAMP NOT NULL,
        PRIMARY KEY (signature_key, gpu, dtype)
    )""",
)

MIGRATIONS: tuple[Migration, ...] = (Migration(1, "initial schema", INITIAL),)
SCHEMA_VERSION = MIGRATIONS[-1].version
