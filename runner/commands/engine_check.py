"""Before a run plays: every engine of the config started once and greeted, on a thread of its
own while the run's Redis and local worker start (docs/engines.md, "Before a run")."""

from __future__ import annotations

import threading
from collections.abc import Callable

from runner.config import TournamentConfig
from runner.domain.registry import ENGINE_PROTOCOLS
from runner.errors import UsageError
from runner.orchestration.workers_gate import EngineEntry, engine_problems


class EnginesCannotPlay(UsageError):
    """Engines of the run that cannot start or cannot play the game as asked (one line each)."""


class EngineCheck:
    """An engine that cannot start, or cannot play the game as asked, stops the run before any
    game, one line each (as fastchess stops; docs/engines.md, "Before a run"): a run that
    scored it as losing every pair would end an SPRT "H0 accepted" on a typo. Engines with a
    build are the workers' to build, and skipped. Only where the matches are played here.

    The check starts every engine once, which takes as long as the start of the run's Redis
    and local worker: it runs on a thread of its own meanwhile (``start``), and the run waits
    for its answer (``problems``) before the coordinator dispatches a match."""

    def __init__(self, run: Callable[[], list[str]]):
        self._found: list[str] = []
        self._error: BaseException | None = None

        def work() -> None:
            try:
                self._found = run()
            except BaseException as e:  # handed to whoever waits for the answer
                self._error = e

        self._thread = threading.Thread(target=work, name="engine-check")
        self._thread.start()

    @classmethod
    def start(cls, config: TournamentConfig) -> EngineCheck | None:
        specs = [*config.entry_specs().values(), *config.seed_opponent_specs().values()]
        engines = [
            EngineEntry(s.name, s.protocol, s.path, [*s.run, *s.args], s.engine)
            for s in specs
            if s.protocol in ENGINE_PROTOCOLS and not s.build
        ]
        if not engines:
            return None
        board = config.game_rules().default_board()
        limits = config.limits_obj
        return cls(
            lambda: engine_problems(engines, config.game, config.game_params, board, config.sandbox, limits)
        )

    def wait(self) -> None:
        self._thread.join()

    def problems(self) -> list[str]:
        """The check's lines, once it is done; its own failure is raised here."""
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._found

    def require(self) -> None:
        """``EnginesCannotPlay`` with the lines, if any engine cannot play."""
        problems = self.problems()
        if problems:
            raise EnginesCannotPlay("\n".join(problems))
