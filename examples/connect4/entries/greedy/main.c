/* A text-protocol entry for connect4: started once per move with its mark as
 * argv[1]; stdin is the position text (the mark to move, then the board rows,
 * top first, '.' empty); stdout is the column to play, 1-based. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char board[20][24];
static int width, height;

static int drop_row(int x) { /* the row a stone dropped in column x lands on, or -1 */
    for (int y = height - 1; y >= 0; y--)
        if (board[y][x] == '.') return y;
    return -1;
}

static int wins(int x, char mark) { /* does dropping `mark` in column x make four? */
    int y = drop_row(x);
    if (y < 0) return 0;
    static const int dirs[4][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};
    for (int d = 0; d < 4; d++) {
        int count = 1;
        for (int sign = -1; sign <= 1; sign += 2) {
            int cx = x + sign * dirs[d][0], cy = y + sign * dirs[d][1];
            while (cx >= 0 && cx < width && cy >= 0 && cy < height && board[cy][cx] == mark) {
                count++;
                cx += sign * dirs[d][0];
                cy += sign * dirs[d][1];
            }
        }
        if (count >= 4) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    char line[64], me, them;
    if (!fgets(line, sizeof line, stdin)) return 1;
    me = argc > 1 ? argv[1][0] : line[0];
    them = me == 'X' ? 'O' : 'X';
    while (height < 20 && fgets(board[height], sizeof board[height], stdin)) {
        board[height][strcspn(board[height], "\n")] = 0;
        if (board[height][0]) height++;
    }
    width = (int)strlen(board[0]);
    for (int x = 0; x < width; x++)
        if (wins(x, me)) { printf("%d\n", x + 1); return 0; }
    for (int x = 0; x < width; x++)
        if (wins(x, them)) { printf("%d\n", x + 1); return 0; }
    for (int off = 0; off < width; off++) /* the free column nearest the centre */
        for (int sign = -1; sign <= 1; sign += 2) {
            int x = width / 2 + sign * off;
            if (x >= 0 && x < width && drop_row(x) >= 0) { printf("%d\n", x + 1); return 0; }
        }
    return 1;
}
