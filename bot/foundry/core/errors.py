"""Exceptions for when the bot itself cannot go on (never for a candidate's failure)."""


class FatalError(Exception):
    """Bad input or configuration; the message tells the user what to fix. The CLI exits 2."""

    exit_code = 2


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM (a cancelled CI job, `kill`): raised in the main thread so that what
    is open is closed as on Ctrl-C (the experience library marks the run interrupted). The CLI exits 143."""
