"""Chess for tourney, on python-chess's rules (docs/engines.md).

The board text is where a game starts: ``startpos`` (the default), or a FEN (an opening
book's position, a Chess960 start). A move is UCI text (``e2e4``, ``e7e8q``; Chess960
castling as king-takes-rook, ``e1h1``), as engines of both protocols are spoken to.

A game ends by the rules at checkmate, stalemate or insufficient material, and, as
cutechess and fastchess end them without a claim, at the third repetition of a position
or when the 50-move rule allows a draw. ``Outcome.reason`` names the rule: it is the
PGN ``Termination`` and what the coordinator's re-judging compares.

States are immutable values: ``play`` copies the board and never changes the one it was
given. It copies the board without its move stack (a copy with it costs a game's length on
every move): the state keeps instead the positions since the last capture or pawn move,
which is what the repetition rule reads.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar, Literal

import chess

from runner.domain.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome

#: the board text of the standard start position
STARTPOS = "startpos"
Variant = Literal["standard", "chess960"]

# the reasons a game ends by the rules (also the PGN Termination's words, docs/engines.md)
CHECKMATE = "checkmate"
STALEMATE = "stalemate"
INSUFFICIENT = "insufficient material"
REPETITION = "3-fold repetition"
FIFTY_MOVES = "50-move rule"
FORFEIT = "opponent forfeited"


@dataclass(frozen=True)
class ChessState:
    board: chess.Board  # never changed once in a state; without its move stack (module doc)
    result: Outcome | None = None
    #: the positions since the last capture or pawn move, this one last (``_position_key``): all
    #: that the repetition rule needs, so that a move copies no move stack
    since_reset: tuple[Hashable, ...] = ()


class Chess(Game[ChessState, chess.Move]):
    name: ClassVar[str] = "chess"
    #: ``tourney play``'s per-move limit for protocols without a clock (text, json)
    default_move_wall_s: ClassVar[float] = 1.0

    def __init__(self, variant: Variant = "standard") -> None:
        self.variant = variant

    @property
    def chess960(self) -> bool:
        return self.variant == "chess960"

    # -- boards ---------------------------------------------------------
    def default_board(self) -> str:
        return STARTPOS

    def board_of(self, board_text: str) -> chess.Board:
        """The python-chess board a board text stands for; ``BoardError`` if it is none."""
        text = board_text.strip()
        if text == STARTPOS:
            return chess.Board(chess960=self.chess960)
        try:
            board = chess.Board(text, chess960=self.chess960)
        except ValueError as e:
            raise BoardError(f"not a FEN ({e}): {text[:80]!r}") from None
        status = board.status()
        if status != chess.STATUS_VALID:
            raise BoardError(f"not a legal position ({status!r}): {text[:80]!r}")
        return board

    def validate_board(self, board_text: str) -> None:
        self.board_of(board_text)

    def generate_board(self, rng: random.Random, **params: object) -> str:
        """A Chess960 start (one of the 960, from the seeded RNG); standard chess has one start."""
        if params:
            raise BoardError(f"chess boards take no generator parameters, got {sorted(params)}")
        if not self.chess960:
            return STARTPOS
        return chess.Board.from_chess960_pos(rng.randrange(960)).fen(shredder=True)

    def start_fen(self, board_text: str) -> str | None:
        """The FEN of a start that is not the standard one (PGN's FEN/SetUp tags), else None."""
        board = self.board_of(board_text)
        if board_text.strip() == STARTPOS or board.fen() == chess.STARTING_FEN:
            return None
        # X-FEN (KQkq where unambiguous): what engines of both protocols read, Chess960 too
        return board.fen()

    # -- play -----------------------------------------------------------
    def new_game(self, board_text: str, players: int) -> ChessState:
        if players != 2:
            raise ValueError(f"chess is played by 2, not {players}")
        board = self.board_of(board_text)
        return ChessState(board, None, (_position_key(board),))

    def to_move(self, state: ChessState) -> int:
        return 0 if state.board.turn == chess.WHITE else 1

    def legal_moves(self, state: ChessState) -> list[chess.Move]:
        if self.outcome(state) is not None:
            return []
        return list(state.board.legal_moves)

    def play(self, state: ChessState, move: chess.Move) -> ChessState:
        if self.outcome(state) is not None:
            raise IllegalMove("the game is over")
        if not state.board.is_legal(move):
            raise IllegalMove(f"{move.uci()} is not legal in {state.board.fen()}")
        board = state.board.copy(stack=False)
        board.push(move)
        key = _position_key(board)
        since = (*state.since_reset, key) if board.halfmove_clock else (key,)
        return ChessState(board, _ending(board, since), since)

    def outcome(self, state: ChessState) -> Outcome | None:
        return state.result

    def forfeit(self, state: ChessState, seat: int) -> ChessState:
        return ChessState(state.board, _won_by(1 - seat, FORFEIT), state.since_reset)

    # -- text -----------------------------------------------------------
    def render(self, state: ChessState) -> str:
        return f"{state.board}\n{state.board.fen(shredder=self.chess960)}\n"

    def position_text(self, state: ChessState, seat: int) -> str:
        # what text/json entries read: the FEN alone (side to move included)
        return state.board.fen(shredder=self.chess960) + "\n"

    def parse_move(self, text: str) -> chess.Move:
        word = text.strip()
        try:
            move = chess.Move.from_uci(word)
        except ValueError:
            raise BadMoveText(f"not a UCI move (like e2e4 or e7e8q): {word[:20]!r}") from None
        if not move:
            raise BadMoveText(f"a null move is no move: {word[:20]!r}")
        return move

    def format_move(self, move: chess.Move) -> str:
        return move.uci()

    def seat_mark(self, state: ChessState, seat: int) -> str:
        return "wb"[seat]


def _won_by(seat: int, reason: str) -> Outcome:
    return Outcome((seat,), (1, 0) if seat == 0 else (0, 1), reason)


def _position_key(board: chess.Board) -> Hashable:
    """What makes two positions the same for the repetition rule: placement, side to move,
    castling rights and a legal en passant square (FEN's first four fields, python-chess's
    default of showing en passant only where it is legal). The bitboards themselves, as
    python-chess keys positions for its own repetition rules: the FEN text says the same but
    costs about 40 times as much, on every move of every game, in the worker and again in the
    coordinator's re-judging."""
    ep = board.ep_square if board.has_legal_en_passant() else None
    pieces = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    return (*pieces, *board.occupied_co, board.turn, board.clean_castling_rights(), ep)


def _ending(board: chess.Board, since_reset: tuple[Hashable, ...]) -> Outcome | None:
    """How the rules end the game at ``board``, or None. Repetition and the 50-move rule
    end it without a claim, as engine testers expect (module doc).

    python-chess's ``board.outcome(claim_draw=False)`` gives the same answers in the same
    order (checkmate, insufficient material, stalemate, the 75-move rule), but looks for a
    legal move up to three times a position, checks the variants' ends and replays the move
    stack for a fivefold repetition (never one here: a state's board has one move in its
    stack, and ``since_reset`` counts repetitions). This runs on every move of every game,
    in the worker and again in the coordinator's re-judging, so it looks for a legal move
    once (tests/games/test_chess.py holds it to ``outcome`` on every kind of ending)."""
    if not any(board.generate_legal_moves()):
        if board.is_check():
            return _won_by(0 if board.turn == chess.BLACK else 1, CHECKMATE)
        return Outcome((), (0, 0), INSUFFICIENT if board.is_insufficient_material() else STALEMATE)
    if board.is_insufficient_material():
        return Outcome((), (0, 0), INSUFFICIENT)
    if board.halfmove_clock >= 150:  # python-chess's 75-move rule, before repetition as there
        return Outcome((), (0, 0), FIFTY_MOVES)
    if since_reset.count(since_reset[-1]) >= 3:
        return Outcome((), (0, 0), REPETITION)
    if board.halfmove_clock >= 100:
        return Outcome((), (0, 0), FIFTY_MOVES)
    return None
