"""``tourney judge --game G [--board FILE] TRANSCRIPT...``: one JSON line per transcript.

What a transcript is and how it is judged: ``runner.domain.games.judge``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from runner.domain.games import get_game
from runner.domain.games.base import BoardError
from runner.domain.games.judge import judge_transcript
from runner.errors import UsageError


def cmd_judge(args: argparse.Namespace) -> int:
    try:
        rules = get_game(args.game)
    except ValueError as e:
        raise UsageError(str(e)) from e
    board: str | None = None
    if args.board is not None:
        if rules.name != "boxing":
            raise UsageError(f"--board is for boxing; {rules.name} transcripts start with their board")
        try:
            board = Path(args.board).read_text(encoding="latin-1")
            rules.validate_board(board)
        except OSError as e:
            raise UsageError(f"{args.board}: {e.strerror or e}") from e
        except BoardError as e:
            raise UsageError(f"{args.board}: {e}") from e

    status = 0
    for path in args.transcripts:  # a bad transcript is reported and skipped; the others are judged
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(errors="replace")
        except OSError as e:
            print(f"tourney judge: {path}: {e.strerror or e}", file=sys.stderr)
            status = 2
            continue
        try:
            verdict = judge_transcript(rules, text, board)
        except (BoardError, ValueError) as e:
            print(f"tourney judge: {path}: {e}", file=sys.stderr)
            status = 2
            continue
        print(json.dumps(verdict), flush=True)
    return status
