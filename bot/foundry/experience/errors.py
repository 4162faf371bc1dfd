"""Why the experience library cannot be used. All are FatalErrors: the message says what to do."""

from __future__ import annotations

from foundry.core.errors import FatalError


class ExperienceError(FatalError):
    """The experience library cannot be opened or written."""


class SchemaTooNewError(ExperienceError):
    """The file was written by a newer bot, with a schema this bot does not know."""


class CorruptLibraryError(ExperienceError):
    """The file is not a readable DuckDB database, or not an experience library. Never replaced."""


class LibraryBusyError(ExperienceError):
    """Other processes held the file's lock for longer than the bounded wait."""
