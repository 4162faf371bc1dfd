"""Exceptions for when the bot itself cannot go on (never for a candidate's failure)."""


class FatalError(Exception):
    """Bad input or configuration; the message tells the user what to fix. The CLI exits 2."""

    exit_code = 2
