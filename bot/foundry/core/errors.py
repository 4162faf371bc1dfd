"""Exceptions for when the bot itself cannot go on (never for a candidate's failure), and the one signal a
writer gives the search loop by raising."""


class FatalError(Exception):
    """Bad input or configuration; the message tells the user what to fix. The CLI exits 2."""

    exit_code = 2


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM (a cancelled CI job, `kill`): raised in the main thread so that what
    is open is closed as on Ctrl-C (the experience library marks the run interrupted). The CLI exits 143."""


class UnsupportedOperatorError(Exception):
    """A writer cannot express this operator at all. The search loop records one failed candidate (kind
    unsupported, with the writer's `diagnosis` when it carries one) and retires the writer: asking again
    would not teach it the operator. Writers raise a subclass of it."""

    diagnosis: object = None  # a core.records.Diagnosis where the writer has one
