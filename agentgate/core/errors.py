"""The one expected-error type and the exit codes that are agentgate's interface."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_PROMOTE = 2
EXIT_SCOPE_ESCAPE = 3
EXIT_BLOCKED = 4
EXIT_USAGE = 64
EXIT_INTERNAL = 70  # EX_SOFTWARE: agentgate itself crashed; never a pass
EXIT_INTERRUPTED = 130


class AgentgateError(Exception):
    """An expected failure: one line saying what is wrong and what to do next.

    Raised anywhere below the CLI; the one handler in ``cli.app`` prints the message and
    exits with ``exit_code`` (64, usage or configuration, unless a caller says otherwise).
    """

    def __init__(self, message: str, *, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class ConfigError(AgentgateError):
    """Configuration, scope, manifest or other input file is unusable (exit 64)."""


class GitError(AgentgateError):
    """git refused, or the repository lacks what agentgate needs (exit 64)."""
