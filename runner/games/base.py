"""``Game`` and the errors its methods raise: the API a plugin game implements
(see docs/games.md). Defined in ``runner.domain.games.base``."""

from runner.domain.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome, RulesError

__all__ = ["BadMoveText", "BoardError", "Game", "IllegalMove", "Outcome", "RulesError"]
