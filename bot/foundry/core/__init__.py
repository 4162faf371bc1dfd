"""Typed records and protocols shared by every part of the bot."""

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

__all__ = [
    "Candidate",
    "Diagnosis",
    "FailureKind",
    "KernelFacts",
    "OperatorSpec",
    "Roofline",
    "Stage",
    "Timing",
    "Verdict",
]
