"""The experience library: a DuckDB file that remembers, across runs and repositories, which kernels
were verified for which kind of operator and which hints helped. The only package importing duckdb.

API for the optimizer (composition root builds the store and the signature, evolve/ sees the session
only through core.protocols.ExperienceSink):

    from foundry.experience import ExperienceStore, HintResult, facts_from_verdict
    from foundry.spec.signature import signature_of           # torch side: captures the aten ops

    store = ExperienceStore()                # FOUNDRY_EXPERIENCE_DB, else ~/.cache/kernel-foundry/…;
                                             # ExperienceStore(path) for an explicit file
    signature = signature_of(loaded)         # OpSignature of the reference on its inputs

    # (1) run start: record the run, retrieve similar verified kernels and matching hints
    session = store.start_run(spec, signature, repo="owner/name", commit=sha, gpu="NVIDIA H200",
                              budget=64, torch_version=torch.__version__, triton_version=triton.__version__)
    hints, kernels = session.retrieve(spec, k=4)   # ExperienceSink.retrieve → (Hint…, Candidate…)
    # kernels: Candidate records (id "lib-…", source, genes, writer, expert) to seed generation 0;
    # session.retrieval holds the details (similarity, speedup, origin repo) for the report.

    # during the run: hints for a lineage's diagnosis (bound class, failure kind, spills)
    more = session.hints_for(facts_from_verdict(parent_verdict), k=3, expert="memory_access")

    # (2) after each evaluation
    session.record(spec, candidate, verdict)       # ExperienceSink.record; one short transaction

    # (3) run end: outcome, best kernel (re-verified verdict), hints that were applied
    note = session.finish("improved", best=best, best_verdict=verdict,
                          applied_hints={"online-softmax": HintResult(success=True, speedup=1.8)})
    # note is a core ExperienceNote (retrieved ids, helped, summary) for RunReport.experience.
    # applied_hints may be omitted: the session then infers hint use from the recorded candidates
    # (a candidate whose notes name a hint id, e.g. the template writer's "warm start from hint
    # <id>", and its descendants applied it; success = verified and faster than eager; untimed
    # verified candidates are no evidence). Explicit results override the inferred ones.
    # `with store.start_run(...) as session:` marks the run crashed if the block raises, interrupted
    # on KeyboardInterrupt (Ctrl-C; the CLI turns SIGTERM into one).

Outcomes: improved (verified and faster) · verified (verified, speed not measured) · no_gain ·
failed (nothing verified) · crashed · interrupted (stopped by a signal, or killed: a run whose process
ended without finishing is marked so when the library is next opened, see experience.live).
Without a session: store.retrieve_for(signature, facts, k, gpu=…, expert=…) → Retrieval(kernels, hints).

Safety: every operation opens the file, runs one short transaction and closes it; processes queue on
an advisory lock beside it (`<file>.lock`) and retry DuckDB's own lock with backoff, up to a bounded
wait (LibraryBusyError after it). A crash loses only the transaction in flight. During a run a busy
library does not stall the search (records wait in memory for the next write), and finish() never
raises for the library: what it could not write goes to `<file>.unsaved-<run>.parquet`, which
`foundry experience import` merges. A newer-schema file is refused (SchemaTooNewError); an
unreadable file is reported (CorruptLibraryError) and never replaced. All three are FatalErrors.
"""

from foundry.experience.db import default_path
from foundry.experience.errors import CorruptLibraryError, ExperienceError, LibraryBusyError, SchemaTooNewError
from foundry.experience.exchange import ExchangeReport, export_parquet, import_parquet
from foundry.experience.hints import DiagnosisFacts, HintDef, Trigger, facts_from_verdict, load_seed_hints
from foundry.experience.retrieval import Retrieval, RetrievedHint, RetrievedKernel
from foundry.experience.schema import SCHEMA_VERSION
from foundry.experience.session import RunSession
from foundry.experience.signature import OpSignature, TensorInfo, similarity
from foundry.experience.store import ExperienceStore, HintResult

__all__ = [
    "SCHEMA_VERSION",
    "CorruptLibraryError",
    "DiagnosisFacts",
    "ExchangeReport",
    "ExperienceError",
    "ExperienceStore",
    "HintDef",
    "HintResult",
    "LibraryBusyError",
    "OpSignature",
    "Retrieval",
    "RetrievedHint",
    "RetrievedKernel",
    "RunSession",
    "SchemaTooNewError",
    "TensorInfo",
    "Trigger",
    "default_path",
    "export_parquet",
    "facts_from_verdict",
    "import_parquet",
    "load_seed_hints",
    "similarity",
]
