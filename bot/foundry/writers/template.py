"""The template writer: Triton candidates from templates, no LLM and no network.

Public API
----------
``TemplateWriter(rules_root=None, loader=None, policy="strict")``
    ``name = "template"``. ``loader(ref) -> LoadedOperator`` (default: foundry.spec.loader.load_operator,
    imported lazily). ``policy`` is the evaluator's policy: "strict" (everything in Triton) or "hybrid"
    (convolutions may stay in the library, gene ``conv.library``; and an aten op no template expresses stays a
    library call between the fused Triton kernels where rules/runtime.yaml lets the hybrid policy keep it:
    ``hybrid_default``, the allocation ops, the operator's FOUNDRY_HYBRID_OPS. Such candidates say so in their
    notes; an operator that would be library calls alone is still unsupported).
    Deterministic: the same request (seed, island, generation, parent) gives the same candidates.
``TemplateWriter.propose(request: ProposalRequest) -> list[Candidate]``
    ``request.count`` candidates (fewer if the gene space runs out), each a self-contained module with
    ``ModelNew``. Without a parent: the default genes (and split rows, ``row.split=auto``, when the rows
    at the full sizes are few and long; whole rows in registers, ``row.max_single_n`` 32768 over 32 warps,
    when rows are longer than the default keeps whole), then the hints' genes as warm starts, then
    seeded mutations (the expert's preferred genes first). With a parent: its diagnosis drives the
    mutation through rules/refinement.yaml; a verified parent is also crossed with past template
    kernels. Raises ``UnsupportedOperator`` (with ``.diagnosis``: stage writer, kind unsupported,
    naming the aten op and why) when the operator has an op no template expresses.
``TemplateWriter.render(spec, genes) -> str``
    The source for an explicit gene set (missing genes take their defaults).
``TemplateWriter.check(spec) -> Diagnosis | None``
    None when the operator is supported, else the unsupported diagnosis.
``Candidate.genes`` keys are namespaced by kernel kind: ``row.BLOCK_N``, ``matmul.precision``, … (see
``foundry.codegen.genes.SPACE``).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foundry.codegen import genes as G
from foundry.codegen.analyze import Analysis, analyze
from foundry.codegen.capture import capture
from foundry.codegen.ir import UnsupportedError
from foundry.codegen.kernels import WHOLE_ROW_N
from foundry.codegen.plan import PlanOptions
from foundry.codegen.render import render_applied
from foundry.codegen.rowsplit import FEW_ROWS, MIN_SPLIT_N, SM_COUNT
from foundry.codegen.training import TrainingAnalysis, analyze_training
from foundry.codegen.training_render import render_training
from foundry.core.errors import UnsupportedOperatorError
from foundry.core.protocols import ProposalRequest
from foundry.core.records import Candidate, Diagnosis, FailureKind, OperatorSpec, Stage, Verdict
from foundry.rules.loader import RulesError, RuntimePolicy, parse, rules_dir

log = logging.getLogger(__name__)


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Condition(Frozen):
    kind: str | None = None
    rule: str | None = None
    message: str | None = None
    verified: bool | None = None
    spills: bool | None = None
    bound: str | None = None
    below_pct: float | None = None
    has_gene: str | None = None
    gene_on: str | None = None  # the parent carries this gene with a value other than 0 / False
    gene_off: str | None = None  # the parent lacks this gene, or carries it at 0 / False


class Action(Frozen):
    gene: str
    op: Literal["up", "down", "set", "default"]
    value: int | float | str | bool | None = None


class RefinementRule(Frozen):
    name: str
    when: Condition
    actions: tuple[Action, ...]


class RefinementTable(Frozen):
    rules: tuple[RefinementRule, ...]
    expert_genes: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    def check_genes(self) -> None:
        for rule in self.rules:
            for action in rule.actions:
                if action.gene not in G.SPACE:
                    raise RulesError(f"refinement.yaml: rule {rule.name}: unknown gene {action.gene!r}")
        for name, targets in self.expert_genes.items():
            for gene in targets:
                if gene not in G.SPACE:
                    raise RulesError(f"refinement.yaml: expert gene {name}: unknown gene {gene!r}")


def load_refinement(root: Path | None = None) -> RefinementTable:
    path = (root or rules_dir()) / "refinement.yaml"
    try:
        table = RefinementTable.model_validate(yaml.safe_load(path.read_text()))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise RulesError(f"{path}: {exc}") from exc
    table.check_genes()
    return table


def load_expert_genes(root: Path, expert: str) -> tuple[str, ...]:
    """preferred_genes of rules/experts/<expert>.yaml (empty when the file is absent)."""
    path = root / "experts" / f"{expert}.yaml"
    if not path.is_file():
        return ()
    data = yaml.safe_load(path.read_text()) or {}
    return tuple(data.get("preferred_genes", ()) or ())


class UnsupportedOperator(UnsupportedOperatorError):
    """The template writer cannot express this operator."""

    def __init__(self, spec: OperatorSpec, op: str, reason: str) -> None:
        super().__init__(f"{spec.ref}: unsupported op {op}: {reason}")
        self.op = op
        self.reason = reason
        self.diagnosis = Diagnosis(
            stage=Stage.WRITER,
            kind=FailureKind.UNSUPPORTED,
            rule="template",
            message=f"{op}: {reason}",
            evidence=f"the template writer has no Triton template for {op} in {spec.ref}",
        )


def default_loader(ref: str) -> Any:
    """Load the operator by reference. Composition roots that already hold the LoadedOperator should
    inject `loader=lambda ref: loaded` instead (writers/ then never imports spec/)."""
    from foundry.spec.loader import load_operator

    return load_operator(ref)


POLICIES = ("strict", "hybrid")
LIBRARY_NOTE = "hybrid: the convolution runs in the library (torch.convolution); everything after it in Triton"
# the hybrid fallback: ops no template expresses, kept as library calls between the Triton kernels
LIBRARY_OPS_NOTE = "hybrid: library ops kept between the Triton kernels (no template for them): {ops}"
# Rows up to WHOLE_ROW_N long (row.max_single_n's top value, at which the codegen keeps whole rows even where
# the looped kernel makes one pass) fit one program's registers over 32 warps (32 fp32 values per thread; sm_90
# compiles of log-softmax over 32,000 columns use 60 registers, no spills): read once instead of once per pass.
REGISTER_ROW_WARPS = 32
# a chunk of a split middle-dim reduction: at least this many reduced rows (fewer spend more on partials than
# they gain in parallelism)
COL_MIN_CHUNK = 256


def stable_seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


class TemplateWriter:
    name = "template"

    def __init__(
        self, rules_root: Path | None = None, loader: Callable[[str], Any] | None = None, policy: str = "strict"
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        self.policy = policy
        self.root = rules_root or rules_dir()
        self.table = load_refinement(self.root)
        self.loader = loader or default_loader
        self.analyses: dict[tuple[str, str], Analysis | TrainingAnalysis | UnsupportedOperator] = {}

    # -- analysis -----------------------------------------------------------------------------------

    def analysis(self, spec: OperatorSpec) -> Analysis | TrainingAnalysis:
        key = (spec.ref, f"{spec.source_hash}:training" if spec.training else spec.source_hash)
        if key not in self.analyses and spec.training:
            # a training operator: the joint forward and backward, cut per save mode (codegen/training.py)
            try:
                self.analyses[key] = replace(analyze_training(self.loader(spec.ref)), precision=spec.precision)
            except UnsupportedError as exc:
                self.analyses[key] = UnsupportedOperator(
                    spec, exc.op, f"{exc.reason} (in training: forward and backward)"
                )
        if key not in self.analyses:
            try:
                capturer = functools.partial(capture, library=self.library_ops(spec))
                self.analyses[key] = replace(analyze(self.loader(spec.ref), capturer), precision=spec.precision)
            except UnsupportedError as exc:
                self.analyses[key] = UnsupportedOperator(spec, exc.op, exc.reason)
        found = self.analyses[key]
        if isinstance(found, UnsupportedOperator):
            raise found
        return found

    def library_ops(self, spec: OperatorSpec) -> frozenset[str]:
        """The aten ops an operator's forward may keep as library calls where no template expresses them: none
        under strict; under hybrid those the runtime guard grants when the reference runs them (rules/runtime.yaml
        hybrid_default), the allocation ops it always allows, and the operator's own FOUNDRY_HYBRID_OPS."""
        if self.policy != "hybrid":
            return frozenset()
        runtime = parse(RuntimePolicy, self.root / "runtime.yaml")
        return frozenset(runtime.hybrid_default) | frozenset(runtime.allocation) | frozenset(spec.hybrid_ops)

    def check(self, spec: OperatorSpec) -> Diagnosis | None:
        try:
            self.analysis(spec)
        except UnsupportedOperator as exc:
            return exc.diagnosis
        return None

    def kinds(self, analysis: Analysis | TrainingAnalysis) -> set[str]:
        """The kernel kinds the analysis plans at any fusion boundary ("train" too for a training operator, whose
        gene train.save chooses what the forward saves for the backward)."""
        training = {"train"} if isinstance(analysis, TrainingAnalysis) else set()
        return (
            {s.kind for s in analysis.segments}
            | {s.kind for s in analysis.replan(PlanOptions(fuse_epilogue=False, merge_reductions=False)).segments}
            | training
        )

    def space(self, analysis: Analysis | TrainingAnalysis) -> list[str]:
        return G.relevant(self.kinds(analysis), self.policy)

    def render(self, spec: OperatorSpec, genes: dict[str, Any]) -> str:
        return self.render_applied(spec, genes)[0]

    def render_applied(self, spec: OperatorSpec, genes: dict[str, Any]) -> tuple[str, frozenset[str]]:
        """The candidate's source for `genes`, and the genes that shaped it (render.render_applied)."""
        analysis = self.analysis(spec)
        if self.policy != "hybrid" and any(genes.get(g) for g in G.HYBRID_ONLY):
            raise ValueError(f"genes {sorted(G.HYBRID_ONLY)} need the hybrid policy")
        full = {**G.defaults(self.kinds(analysis), self.policy), **genes}
        options = PlanOptions(
            fuse_epilogue=bool(full.get("plan.fuse_epilogue", True)),
            merge_reductions=bool(full.get("plan.merge_reductions", True)),
            # the library convolution's epilogue is a flat kernel: no reductions over channels in it
            channel_convs=frozenset() if full.get("conv.library") else analysis.channel_convs,
        )
        planned = analysis.replan(options)
        used = {s.kind for s in planned.segments}
        shown = {k: v for k, v in full.items() if k.split(".")[0] in used or k.startswith(("plan.", "train."))}
        try:
            if isinstance(planned, TrainingAnalysis):
                return render_training(planned, shown)
            return render_applied(planned, shown)
        except UnsupportedError as exc:
            raise UnsupportedOperator(spec, exc.op, exc.reason) from exc

    # -- proposals ----------------------------------------------------------------------------------

    def propose(self, request: ProposalRequest) -> list[Candidate]:
        analysis = self.analysis(request.spec)
        names = self.space(analysis)
        preferred = self.preferred(request.expert, names)
        rng = random.Random(
            stable_seed(
                request.seed,
                request.island,
                request.generation,
                request.parent.id if request.parent else "",
                request.expert,
            )
        )
        base = G.defaults(self.kinds(analysis), self.policy)
        gene_sets: list[tuple[dict[str, Any], str]] = []
        parent = request.parent
        if parent is None:
            gene_sets.append((dict(base), "defaults"))
            narrow = "conv.algo" in base and analysis.narrow_convs()
            fitted = None if narrow else self.fitted_conv(analysis, base, request.spec.precision)
            if fitted:
                # the fitted tile (channels-last, tap-major), then the same tile reading the input as given (the
                # flat K loop, or tap-major where stride phases skip taps) for convolutions where staging the input
                # costs more than it saves; both before the defaults, which the H200 measured at 0.3x of eager on
                # every GEMM convolution (2026-12-04) and which a time-limited first generation may not reach
                as_given = {**fitted, "conv.layout": base["conv.layout"], "conv.k_order": self.given_k_order(analysis)}
                gene_sets[:0] = [
                    (fitted, "implicit GEMM tile fitted to the output channels, channels-last input"),
                    (as_given, "implicit GEMM tile fitted to the output channels, input as given"),
                ]
                split = self.conv_split(analysis, fitted)
                if split > 1:
                    # too few output tiles to fill the GPU: first, the fitted tile with K split over programs
                    split_genes = {**fitted, "conv.split_k": split}
                    gene_sets.insert(0, (split_genes, f"fitted tile, K split {split} ways (few output tiles)"))
            if "conv.library" in base:
                # hybrid: even islands start from the library convolution, odd ones from all-Triton, so
                # both kinds are measured from the first generation even when an island proposes one child
                library = ({**base, "conv.library": True}, "library convolution")
                gene_sets.insert(request.island % 2, library)
            col_split = self.col_split(analysis, base) if "col.split" in base else 1
            if col_split > 1:
                # too few strips of the inner dims to fill the GPU (a bias gradient over many rows): first, the
                # rows split into chunks whose partials a second kernel merges; the defaults next
                gene_sets.insert(0, ({**base, "col.split": col_split}, f"reduced rows split {col_split} ways"))
            if "row.split" in base and self.few_long_rows(analysis):
                # odd islands start from split rows, even ones from one program per row: both are measured
                # from the first generation even when an island proposes one child. Split rows in one launch
                # first (each row read once; 8192-wide tiles over 4 warps were the fastest, genes.repair), then
                # in two (1024-wide tiles over 4 warps, the fastest two-kernel variant; group norm, H200). The
                # one-launch tile at 5 programs per SM (96 registers): 1-2% faster than the compiler's 128
                # (4 per SM) in 6 of 6 timings (2026-12-04)
                one = {**base, "row.split": "auto", "row.combine": "one_kernel"}
                one.update({"row.BLOCK_N": 8192, "row.num_warps": 4, "row.occupancy": 5})
                two = {**base, "row.split": "auto", "row.BLOCK_N": 1024, "row.num_warps": 4}
                splits = [
                    (one, "split rows in one launch (few long rows: a program per tile, partials merged in place)"),
                    (two, "split rows (few long rows: partials, then merge)"),
                ]
                at = 0 if request.island % 2 else len(gene_sets)
                gene_sets[at:at] = splits
            whole = {**base, "row.max_single_n": WHOLE_ROW_N, "row.num_warps": REGISTER_ROW_WARPS}
            if (
                "row.max_single_n" in base
                and self.register_rows(analysis, int(base["row.max_single_n"]))
                and "BLOCK_N=next_power_of_2(N)" in self.render(request.spec, whole)  # a whole-row launch ships
            ):
                # second: the island after the defaults' takes it (islands skip candidates another one has);
                # each row read once, and reduced once rather than tile by tile
                gene_sets.insert(1, (whole, "whole rows in registers (each row read once)"))
            if "matmul.precision" in base and request.spec.precision == "fp32":
                tc = {**base, "matmul.precision": "tf32x3", "matmul.BLOCK_N": 64}
                gene_sets.append((tc, "tensor-core fp32 (3xTF32)"))
            if narrow:
                # narrow groups: the per-channel plane kernel with a 16 x 128 tile over 4 warps ("auto" runs it
                # for depthwise convolutions at the default tile, the direct kernel for other narrow groups);
                # second, so that the island after the defaults' measures it in the first generation
                plane = {**base, "conv.algo": "plane", "conv.BLOCK_M": 128, "conv.BLOCK_N": 16, "conv.num_warps": 4}
                gene_sets.insert(1, (plane, "one channel per program over 2-d spatial tiles (narrow groups)"))
            if "conv.precision" in base and request.spec.precision == "fp32":
                gene_sets.append(({**base, "conv.precision": "tf32x3"}, "tensor-core fp32 convolution (3xTF32)"))
            if "conv.k_order" in base and not narrow:
                # the GEMM's K loop tap-major (the H200, 2026-12-03: slower for 2-d convs, faster for a strided
                # transposed 3-d conv, whose stride phases then skip the taps they never meet)
                gene_sets.append(({**base, "conv.k_order": "tap"}, "GEMM K loop over taps, then in-channels"))
            for hint in request.hints:
                warm = {k: v for k, v in hint.genes.items() if k in base}
                if warm:
                    gene_sets.append(({**base, **warm}, f"warm start from hint {hint.id}"))
            start = base
        else:
            start = {**base, **{k: v for k, v in parent.genes.items() if k in base}}
            refined, fired = self.refine(start, request.parent_verdict, request.spec.precision)
            if fired:
                gene_sets.append((refined, "refined by " + ", ".join(fired)))
            if request.parent_verdict is not None and request.parent_verdict.verified:
                for past in request.past_kernels:
                    if past.writer == self.name and past.genes and past.id != parent.id:
                        child = self.crossover(start, past.genes, rng)
                        gene_sets.append((child, f"crossover of {parent.id} and {past.id}"))
                        break
        attempts = 0
        shaping: dict[str, list[str]] = {}
        while len(gene_sets) < request.count * 3 and attempts < request.count * 20:
            attempts += 1
            origin = gene_sets[rng.randrange(len(gene_sets))][0] if gene_sets and rng.random() < 0.5 else start
            # mutate only genes that shape the origin's kernel: a gene it never reads (row.welford with no variance,
            # row.combine with unsplit rows) would give the origin's source again, a duplicate another island
            # may already hold (the module docstring lists only the genes read, so the sources are equal)
            pool = self.shaping_genes(request.spec, origin, names, shaping)
            gene_sets.append(
                (
                    self.mutate(origin, [g for g in preferred if g in pool], pool, rng, request.spec.precision),
                    f"mutation ({request.expert or 'any'} genes)",
                )
            )
        return self.candidates(request, gene_sets)

    def shaping_genes(
        self, spec: OperatorSpec, genes: dict[str, Any], names: list[str], cache: dict[str, list[str]]
    ) -> list[str]:
        """Of `names`, those the kernel rendered from `genes` reads (all of them where it does not render)."""
        key = repr(sorted(genes.items()))
        if key not in cache:
            try:
                _, applied = self.render_applied(spec, G.repair(genes))
            except UnsupportedOperator:
                applied = frozenset(names)
            cache[key] = [n for n in names if n in applied] or list(names)
        return cache[key]

    @staticmethod
    def fitted_conv(analysis: Analysis, base: dict[str, Any], precision: str) -> dict[str, Any] | None:
        """Implicit-GEMM genes fitted to the convolutions' output channels at the full inputs: a 128-position
        tile spans a group's output channels (up to 128), so each gathered input tile feeds all of them
        (8 warps from 64 channels, else 4), with three stages; 3xTF32 for fp32; the input staged channels-last
        with the tap-major K loop, so each tap's in-channels are one contiguous run. On the H200 (2026-12-03,
        tests/gpu/gene_sweep.py) this tile was the fastest of those tried on five convolution examples, 3-4x
        faster than the defaults on the four where both were timed; channels-last with the tap-major loop then
        took it from 1.68 to 0.97 ms (3-d conv), 0.90 to 0.74 ms (2-d conv) and 0.82 to 0.48 ms (strided
        transposed 3-d conv) (2026-12-04); channels-last with the flat K loop was slower than either."""
        widths = analysis.gemm_conv_widths()
        if "conv.BLOCK_N" not in base or not widths:
            return None
        block_n = min(128, max(16, 1 << (max(c for c, _ in widths) - 1).bit_length()))
        genes = {
            **base,
            "conv.BLOCK_N": block_n,
            "conv.BLOCK_M": 128,
            "conv.num_warps": 8 if block_n >= 64 else 4,
            "conv.num_stages": 3,
            "conv.layout": "channels_last",
            "conv.k_order": "tap",
        }
        if precision == "fp32":
            genes["conv.precision"] = "tf32x3"
        return genes

    @staticmethod
    def conv_split(analysis: Analysis, fitted: dict[str, Any]) -> int:
        """Split-K for the fitted tile: when its output tiles at the full inputs are fewer than the GPU's SMs,
        enough programs per tile for about two per SM (at most 8), and no more than the tap-major loop has
        in-channel blocks to share; 1 otherwise."""
        grids = analysis.gemm_conv_grids(int(fitted["conv.BLOCK_M"]), int(fitted["conv.BLOCK_N"]))
        tiles = max((tiles for tiles, _ in grids), default=SM_COUNT)
        if tiles >= SM_COUNT:
            return 1
        blocks = min(-(-cig // int(fitted["conv.BLOCK_K"])) for _, cig in grids)
        want = 1 << (-(-2 * SM_COUNT // tiles) - 1).bit_length()
        return max(1, min(int(G.SPACE["conv.split_k"][-1]), want, 1 << (blocks.bit_length() - 1)))

    @staticmethod
    def col_split(analysis: Analysis | TrainingAnalysis, genes: dict[str, Any]) -> int:
        """Chunks of the reduced rows per strip for the middle-dim reductions: where their strips at the full
        inputs are fewer than two per SM, enough chunks (a power of two) for about four programs per SM, each of
        at least COL_MIN_CHUNK rows; 1 otherwise."""
        width = int(genes["col.BLOCK_I"])
        best = 1
        for outer, rows, inner in analysis.col_extents():
            strips = outer * -(-inner // min(width, 1 << max(inner - 1, 0).bit_length()))
            if strips >= 2 * SM_COUNT or rows < 2 * COL_MIN_CHUNK:
                continue
            want = min(-(-4 * SM_COUNT // strips), rows // COL_MIN_CHUNK, int(G.SPACE["col.split"][-1]))
            best = max(best, 1 << (want.bit_length() - 1))
        return best

    @staticmethod
    def given_k_order(analysis: Analysis) -> str:
        """The K order for the input as given: tap-major for a strided transposed conv (its stride phases skip
        the taps they never meet), else one flat channel x tap range (faster for 2-d convs on the H200)."""
        return "tap" if any(subpixel for _, subpixel in analysis.gemm_conv_widths()) else "channel"

    @staticmethod
    def register_rows(analysis: Analysis, kept_whole: int) -> bool:
        """Rows at the full inputs longer than `kept_whole` (the default single-tile limit) that still fit
        one program's registers: a looped kernel would read them once per pass."""
        return any(kept_whole < 1 << max(n - 1, 0).bit_length() <= WHOLE_ROW_N for _, n in analysis.row_extents())

    @staticmethod
    def few_long_rows(analysis: Analysis) -> bool:
        """A row segment whose rows at the full inputs are too few to fill the GPU and long enough to split."""
        return any(rows < FEW_ROWS and n >= MIN_SPLIT_N for rows, n in analysis.row_extents())

    def candidates(self, request: ProposalRequest, gene_sets: list[tuple[dict[str, Any], str]]) -> list[Candidate]:
        """Render each gene set (after repair) into a candidate, skipping duplicates. A gene set the templates
        cannot express (a fusion boundary that leaves an unsupported kernel, say) is skipped: the operator is
        unsupported only when none of them renders (the search retires a writer that raises)."""
        out: list[Candidate] = []
        seen: set[str] = set()
        refused: UnsupportedOperator | None = None
        analysis = self.analysis(request.spec)
        kept = analysis.library_ops() if isinstance(analysis, Analysis) else []
        fallback = LIBRARY_OPS_NOTE.format(ops=", ".join(kept)) if kept else ""
        for genes, why in gene_sets:
            genes = G.repair(genes)
            try:
                source = self.render(request.spec, genes)
            except UnsupportedOperator as exc:
                changed = {k: v for k, v in genes.items() if G.DEFAULTS.get(k) != v}
                log.info("template: %s %s not rendered: %s", why, changed, exc)
                refused = refused or exc
                continue
            digest = hashlib.sha1(source.encode()).hexdigest()[:10]
            if digest in seen:
                continue
            seen.add(digest)
            out.append(
                Candidate(
                    id=f"tpl-{request.spec.name}-i{request.island}-g{request.generation}-{digest}",
                    source=source,
                    writer=self.name,
                    expert=request.expert,
                    island=request.island,
                    generation=request.generation,
                    parent_id=request.parent.id if request.parent else None,
                    genes=genes,
                    notes="; ".join(
                        [why] + ([LIBRARY_NOTE] if genes.get("conv.library") else []) + ([fallback] if fallback else [])
                    ),
                )
            )
            if len(out) >= request.count:
                break
        if not out and refused is not None:
            raise refused
        return out

    def preferred(self, expert: str, names: list[str]) -> list[str]:
        wanted: list[str] = []
        for gene in load_expert_genes(self.root, expert) if expert else ():
            for target in self.table.expert_genes.get(gene, ()):
                if target in names and target not in wanted:
                    wanted.append(target)
        return wanted

    def mutate(
        self, genes: dict[str, Any], preferred: list[str], names: list[str], rng: random.Random, precision: str
    ) -> dict[str, Any]:
        child = dict(genes)
        for _ in range(rng.choice((1, 1, 2, 3))):
            pool = preferred if preferred and rng.random() < 0.75 else names
            name = rng.choice(pool)
            values = G.allowed(name, precision)
            if rng.random() < 0.6 and child.get(name) in values:
                child[name] = G.step(name, child[name], rng.choice((-1, 1)), precision)
            else:
                child[name] = rng.choice(values)
        return child

    def crossover(self, a: dict[str, Any], b: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {k: (b[k] if k in b and rng.random() < 0.5 else v) for k, v in a.items()}

    def refine(
        self, genes: dict[str, Any], verdict: Verdict | None, precision: str
    ) -> tuple[dict[str, Any], list[str]]:
        """Apply every matching rule of rules/refinement.yaml to the parent's genes."""
        if verdict is None:
            return genes, []
        child = dict(genes)
        touched: set[str] = set()
        fired: list[str] = []
        for rule in self.table.rules:
            if not self.matches(rule.when, verdict, genes):
                continue
            changed = False
            for action in rule.actions:
                if action.gene not in child or action.gene in touched:
                    continue
                before = child[action.gene]
                if action.op == "set":
                    if action.value in G.allowed(action.gene, precision):
                        child[action.gene] = action.value
                elif action.op == "default":
                    child[action.gene] = G.DEFAULTS[action.gene]
                else:
                    child[action.gene] = G.step(action.gene, before, 1 if action.op == "up" else -1, precision)
                touched.add(action.gene)
                changed = changed or child[action.gene] != before
            if changed:
                fired.append(rule.name)
        return child, fired

    @staticmethod
    def matches(when: Condition, verdict: Verdict, genes: dict[str, Any]) -> bool:
        failure = verdict.failure
        timing = verdict.timing
        roof = timing.roofline if timing else None
        checks: list[bool] = []
        if when.kind is not None:
            checks.append(failure is not None and failure.kind == when.kind)
        if when.rule is not None:
            checks.append(failure is not None and failure.rule == when.rule)
        if when.message is not None:
            checks.append(failure is not None and when.message.lower() in failure.message.lower())
        if when.verified is not None:
            checks.append(verdict.verified == when.verified)
        if when.spills is not None:
            spilled = any((k.spills or 0) > 0 for k in verdict.kernels) or any(
                (d.metrics.get("spills", 0) > 0) for d in verdict.diagnoses
            )
            checks.append(spilled == when.spills)
        if when.bound is not None:
            checks.append(roof is not None and roof.bound == when.bound)
        if when.below_pct is not None:
            checks.append(roof is not None and roof.pct_of_floor < when.below_pct)
        if when.has_gene is not None:
            checks.append(when.has_gene in genes)
        if when.gene_on is not None:
            checks.append(bool(genes.get(when.gene_on)))
        if when.gene_off is not None:
            checks.append(not genes.get(when.gene_off))
        return bool(checks) and all(checks)


__all__ = ["TemplateWriter", "UnsupportedOperator", "load_refinement", "RefinementTable"]
