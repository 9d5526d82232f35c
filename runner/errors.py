"""One root for tourney's exceptions, its branches sorted by what the caller does next.

Entry failures are not exceptions past the referee loop: they become verdicts
(data). What is left are infrastructure failures and refused input, and the
branch an error hangs on says how to handle it::

    TourneyError
    ├── EntryFault        the entry broke the rules: charge it a verdict
    │     RulesError (BoardError, BadMoveText, IllegalMove), BuildOutputError
    ├── MessageRejected   untrusted input refused: drop it, count it against its sender
    │     SignatureError, WireError, ResultMismatch
    ├── RetryElsewhere    this machine failed this match: give the attempt back,
    │     HostError (ChannelClosed, CgroupError), ArtifactError, PolicyRefused, RefereeError
    ├── WorkerUnfit       this worker cannot serve at all: stop the worker
    │     PreflightFailed, KeyFileError
    ├── RunHalted         the run cannot go on now: stop it; the same command resumes
    │     StoreError, RedisServerError, BrokerDown, LocalWorkersFailing
    └── CommandError      tell the user and exit with ``exit_code`` (runner.cli prints it once)
          └── UsageError  what was asked is wrong (exit 2)
                ConfigError, EntryError, ResumeRefused, RerunRefused, UnknownMatch,
                BrokerURLError, GameLoadError, GameParamsError

``SearchBudgetExceeded`` hangs on the root alone: it is the pairing search's
control flow and never leaves the planner.

Classes keep their historical second base (``ValueError``, ``RuntimeError``,
``KeyError``) so that narrow ``except`` clauses written against it still hold.
"""

from __future__ import annotations


class TourneyError(Exception):
    """The root: every error tourney raises on purpose."""


class EntryFault(TourneyError):
    """An entry broke the game's rules; the referee loop turns it into a verdict."""


class MessageRejected(TourneyError):
    """Untrusted input (a message, a result) refused; drop it, charge whoever sent it."""


class RetryElsewhere(TourneyError):
    """This machine could not play this match; the attempt is given back for another worker."""


class WorkerUnfit(TourneyError):
    """This worker cannot serve any match (no sandbox, no key, refused policy): stop it."""


class RunHalted(TourneyError):
    """The run cannot go on now (store, broker); stop it, and the same command resumes it."""


class CommandError(TourneyError):
    """A command fails with a message for the user; ``runner.cli.main`` prints it once.

    Raised by ``cmd_*`` handlers instead of printing and returning an exit code."""

    exit_code: int = 1
    #: printed as ``tourney CMD: message``; False for messages that locate themselves
    #: (a config's ``file:line:col: message`` lines)
    prefixed: bool = True

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CommandError):
    """What was asked is wrong (arguments, config, entries, run directory): exit 2."""

    exit_code = 2
