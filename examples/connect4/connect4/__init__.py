"""A tourney game plugin: connect four (``connect4.game:Connect4``)."""

from connect4.game import Connect4

__all__ = ["Connect4"]
