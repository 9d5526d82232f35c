"""The public import path of the game API, for games written outside tourney.

docs/games.md names it: a plugin game is a ``runner.games.base.Game`` subclass.
The rules themselves live in the domain layer (``runner.domain.games``); this
package only gives plugins a path that internal moves never break.
"""

from runner.domain.games import get_game

__all__ = ["get_game"]
