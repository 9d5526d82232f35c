"""Seeding (seed 000 stage 1): every entrant plays each seed opponent twice on one board.

It is a gauntlet with seed 000's defaults: each side moves first once
(``games_per_pairing: 2``), points 1000/1200 for a win as first/second and
500/600 for a tie plus the entry's own game score, ranked by points. The
resulting order is the seeding the next stage uses for bracket positions
(and nothing else).
"""

from __future__ import annotations

from runner.domain.stages.gauntlet import plan

__all__ = ["plan"]
