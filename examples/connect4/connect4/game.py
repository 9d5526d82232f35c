"""Connect four for tourney. Board text "W H" (default "7 6"); a move is the 1-based column a
stone drops into; ``connect`` in a row (a game parameter, default 4) wins; a full board draws."""

from __future__ import annotations

from dataclasses import dataclass, replace

from runner.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome


@dataclass(frozen=True)
class State:
    width: int
    height: int
    rows: tuple[str, ...]  # top row first; "." empty, "X"/"O" stones
    to_move: int = 0
    result: Outcome | None = None


class Connect4(Game[State, int]):
    name = "connect4"

    def __init__(self, connect: int = 4) -> None:
        if connect < 2:
            raise ValueError(f"connect must be at least 2, got {connect}")
        self.connect = connect

    def default_board(self) -> str:
        return "7 6"

    def validate_board(self, board_text: str) -> None:
        parts = board_text.split()
        if len(parts) != 2 or not all(p.isdigit() and 4 <= int(p) <= 20 for p in parts):
            raise BoardError(f"a board is 'W H' with sides 4..20, got {board_text.strip()!r}")

    def new_game(self, board_text: str, players: int) -> State:
        self.validate_board(board_text)
        width, height = (int(p) for p in board_text.split())
        return State(width, height, ("." * width,) * height)

    def to_move(self, state: State) -> int:
        return state.to_move

    def legal_moves(self, state: State) -> list[int]:
        if state.result is not None:
            return []
        return [x + 1 for x in range(state.width) if state.rows[0][x] == "."]

    def play(self, state: State, move: int) -> State:
        if move not in self.legal_moves(state):
            raise IllegalMove(f"column {move} is full or off the board")
        x, mark = move - 1, "XO"[state.to_move]
        y = max(r for r in range(state.height) if state.rows[r][x] == ".")
        rows = list(state.rows)
        rows[y] = rows[y][:x] + mark + rows[y][x + 1 :]
        after = State(state.width, state.height, tuple(rows), 1 - state.to_move)
        if self._line_through(after, x, y, mark):
            return _finish(after, state.to_move, f"{self.connect} in a row")
        if "." not in rows[0]:
            return replace(after, result=Outcome((), (0, 0), "board full"))
        return after

    def _line_through(self, state: State, x: int, y: int, mark: str) -> bool:
        for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
            count = 1
            for sign in (1, -1):
                cx, cy = x + sign * dx, y + sign * dy
                while 0 <= cx < state.width and 0 <= cy < state.height and state.rows[cy][cx] == mark:
                    count, cx, cy = count + 1, cx + sign * dx, cy + sign * dy
            if count >= self.connect:
                return True
        return False

    def outcome(self, state: State) -> Outcome | None:
        return state.result

    def forfeit(self, state: State, seat: int) -> State:
        return _finish(state, 1 - seat, "opponent forfeited")

    def render(self, state: State) -> str:
        return "\n".join(state.rows) + "\n"

    def position_text(self, state: State, seat: int) -> str:
        # what text/json entries read: the mark to move, then the board
        return f"{'XO'[state.to_move]}\n{self.render(state)}"

    def parse_move(self, text: str) -> int:
        if not text.strip().isdigit():
            raise BadMoveText(f"a move is a column number, got {text.strip()[:20]!r}")
        return int(text)

    def format_move(self, move: int) -> str:
        return str(move)


def _finish(state: State, winner: int, reason: str) -> State:
    scores = (1, 0) if winner == 0 else (0, 1)
    return replace(state, result=Outcome((winner,), scores, reason))
