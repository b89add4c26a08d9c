"""The errors a user can cause: each names the field (a dotted path) and the problem.

``OpenClawError`` is the one base the CLI prints as a single line; anything else is a bug and keeps
its traceback. The concrete classes also derive from ``ValueError`` so that callers catching that
keep working.

>>> str(ConfigError("systems[1].strategy", "unknown name 'dnese'", "did you mean 'dense'?"))
"systems[1].strategy: unknown name 'dnese'; did you mean 'dense'?"
"""

from __future__ import annotations

__all__ = ["OpenClawError", "ConfigError", "DataError", "IncompleteRunError"]


class OpenClawError(Exception):
    """Base of every error caused by input (a config, a data file, a run folder), not by a bug."""


class ConfigError(OpenClawError, ValueError):
    """A configuration value that is wrong: ``field`` is its dotted path in the config."""

    def __init__(self, field: str, problem: str, hint: str = "") -> None:
        self.field, self.problem, self.hint = field, problem, hint
        super().__init__(f"{field}: {problem}" + (f"; {hint}" if hint else ""))


class DataError(OpenClawError, ValueError):
    """A data file that cannot be read as its format says: names the file, the record and the field."""


class IncompleteRunError(OpenClawError, ValueError):
    """A results folder that a run did not finish writing."""
