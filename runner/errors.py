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
    │     StoreError, RedisServerError, BrokerDown, LocalWorkersFailing,
    │     BrokerWireError (BrokerUnreachable: BrokerPasswordRefused, BrokerNotRedis;
    │     BrokerRefused): one broker command failed; whoever can wait for the broker
    │     retries it first (``workers.broker_wire``)
    └── CommandError      tell the user and exit with ``exit_code`` (runner.cli prints it once)
          ├── InfrastructureFailure  the machinery failed (exit 3)
          └── UsageError  what was asked is wrong (exit 2)
                ConfigError, EntryError, RefusedPath, ResumeRefused, RerunRefused, UnknownMatch,
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


class BrokerWireError(RunHalted):
    """One command to the broker failed. What ``workers.broker_wire.wire_error`` makes of the
    Redis client's (and kombu's) errors; a caller that can wait for the broker retries, and
    one that has waited too long halts the run. Raised as itself for a client error that is
    neither a failed connection nor the broker's answer (a bad argument: a bug of ours)."""

    def __init__(self, detail: str, reason: str = "") -> None:
        super().__init__(detail)
        #: the client's own message, without its type: the part a one-line message for the
        #: user quotes ("broker ... is unreachable: <reason>")
        self.reason = reason or detail


class BrokerUnreachable(BrokerWireError, ConnectionError):
    """The broker did not answer (refused connection, reset, timed out)."""


class BrokerPasswordRefused(BrokerUnreachable):
    """The broker refused the password. The Redis client counts it as a connection that
    failed (a worker waits for it as for an absent broker: a password fixed on the broker's
    side lets it in); a check at start says it apart."""


class BrokerNotRedis(BrokerUnreachable):
    """Something answers at the broker's address, but not in Redis's protocol."""


class BrokerRefused(BrokerWireError):
    """The broker answered with an error (a command its ACL or configuration refuses, a full
    memory, a read-only replica)."""


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


#: the exit codes of every command (README.md, "Exit codes"; ``tourney --help``)
EXIT_OK = 0
#: the command ran, and what it did failed: a run left matches FAILED, a rerun's result broke the rules
EXIT_FAILED = 1
#: what was asked is wrong: arguments, config, entries, run directory (``UsageError``)
EXIT_USAGE = 2
#: the machinery failed: broker unreachable or refusing, embedded Redis, sandbox, local workers
EXIT_INFRASTRUCTURE = 3
#: Ctrl-C (128 + SIGINT) and SIGTERM/SIGHUP (128 + SIGTERM); a run says how to resume
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
#: stdout's reader went away (``| head``): as a program killed by SIGPIPE, without a traceback
EXIT_OUTPUT_CLOSED = 141

EXIT_CODES_TEXT = """exit codes (every command):
  0    done
  1    done, but what it did failed (a run with FAILED matches, a replay that breaks the rules)
  2    bad input: arguments, config, entries, run directory (file:line:col: what is wrong)
  3    infrastructure: broker unreachable or refusing, embedded Redis, sandbox, local workers,
       a game this machine could not play (tourney play, tourney rerun)
  130  interrupted (Ctrl-C); 143: stopped by SIGTERM or SIGHUP (a run prints how to resume)
  141  the reader of the output went away (e.g. `| head -1`); nothing is printed about it"""


class InfrastructureFailure(CommandError):
    """The machinery failed (broker, embedded Redis, sandbox, local workers): exit 3."""

    exit_code = EXIT_INFRASTRUCTURE


class UsageError(CommandError):
    """What was asked is wrong (arguments, config, entries, run directory): exit 2."""

    exit_code = 2
