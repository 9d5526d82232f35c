/* threats -- a Gomocup brain for free-style gomoku (five or more in a row).
 *
 * Protocol (one process per game, one command per line, answers flushed):
 *   START n / RECTSTART w,h  -> OK (ERROR for boards it cannot hold)
 *   RESTART                   -> OK (empty board)
 *   INFO key value            -> no answer; "win_length K" sets the line length
 *   BEGIN                     -> our first move "x,y" (0-based column,row)
 *   TURN x,y                  -> the opponent's move; answer with ours
 *   BOARD / x,y,f ... / DONE  -> the whole position (f: 1 ours, 2 theirs,
 *                                3 a winning-line marker, treated as theirs); our move
 *   TAKEBACK x,y              -> OK
 *   ABOUT                     -> name="threats", version=...
 *   END                       -> exit
 *
 * Move choice, in order:
 *  1. complete a line of K if we can;
 *  2. block the opponent's completing cell;
 *  3. make two completing cells at once (an open four, or two fours): the
 *     opponent can block only one;
 *  4. otherwise score every empty cell near the stones: each window of K
 *     cells through the cell that holds stones of one colour only is worth
 *     8^(n-1) for n stones (ours count fully, the opponent's 0.85 -- blocking),
 *     and among the best ten keep those after which the opponent has no move
 *     making two completing cells (an open three left alone), unless the move
 *     makes a four of our own, which the opponent must answer first.
 * No deeper search: it is a sample opponent, quick (a few ms a move).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXS = 32, MAXC = MAXS * MAXS, ME = 1, OPP = 2, TOP = 10 };

static int W = 15, H = 15, L = 5;
static unsigned char cell[MAXC];

static const int DX[4] = {1, 0, 1, 1};
static const int DY[4] = {0, 1, 1, -1};

static int inside(int x, int y) { return x >= 0 && x < W && y >= 0 && y < H; }

static int run_len(int x, int y, int dx, int dy, int p) {
    int n = 0;
    for (x += dx, y += dy; inside(x, y) && cell[y * W + x] == p; x += dx, y += dy) n++;
    return n;
}

/* Would p complete a line of L by playing the empty cell i? */
static int wins_at(int i, int p) {
    int x = i % W, y = i / W;
    for (int d = 0; d < 4; d++)
        if (1 + run_len(x, y, DX[d], DY[d], p) + run_len(x, y, -DX[d], -DY[d], p) >= L) return 1;
    return 0;
}

/* Completing cells p would have after playing the empty cell i (only cells
   on the lines through i can be new ones). */
static int threats_after(int i, int p) {
    int x0 = i % W, y0 = i / W, n = 0;
    int seen[4 * 2 * MAXS], ns = 0;
    cell[i] = (unsigned char)p;
    for (int d = 0; d < 4; d++)
        for (int sgn = -1; sgn <= 1; sgn += 2)
            for (int s = 1; s < L; s++) {
                int x = x0 + sgn * s * DX[d], y = y0 + sgn * s * DY[d];
                if (!inside(x, y)) break;
                int j = y * W + x;
                if (cell[j] == 3 - p) break;
                if (cell[j] || !wins_at(j, p)) continue;
                int dup = 0;
                for (int k = 0; k < ns; k++) dup |= seen[k] == j;
                if (!dup) {
                    seen[ns++] = j;
                    n++;
                }
            }
    cell[i] = 0;
    return n;
}

static double pow8[MAXS + 2];

/* Window score of the empty cell i: attack for us, defence against them. */
static double score_at(int i) {
    int x0 = i % W, y0 = i / W;
    double att = 0, def = 0;
    for (int d = 0; d < 4; d++)
        for (int start = -(L - 1); start <= 0; start++) {
            int mine = 0, theirs = 0, ok = 1;
            for (int s = start; s < start + L && ok; s++) {
                int x = x0 + s * DX[d], y = y0 + s * DY[d];
                if (!inside(x, y)) {
                    ok = 0;
                    break;
                }
                int c = cell[y * W + x];
                mine += c == ME;
                theirs += c == OPP;
            }
            if (!ok) continue;
            if (!theirs) att += pow8[mine];
            if (!mine) def += pow8[theirs];
        }
    /* a little pull towards the centre breaks ties on an open board */
    double cx = (W - 1) / 2.0, cy = (H - 1) / 2.0;
    double centre = -0.001 * ((x0 - cx) * (x0 - cx) + (y0 - cy) * (y0 - cy));
    return att + 0.85 * def + centre;
}

static int near_stone(int i, int r) {
    int x0 = i % W, y0 = i / W;
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
            int x = x0 + dx, y = y0 + dy;
            if (inside(x, y) && cell[y * W + x]) return 1;
        }
    return 0;
}

/* Does p have a move that makes two completing cells? */
static int has_double_threat(int p) {
    for (int i = 0; i < W * H; i++)
        if (!cell[i] && near_stone(i, 2) && threats_after(i, p) >= 2) return 1;
    return 0;
}

static int choose(void) {
    int n = W * H, stones = 0;
    for (int i = 0; i < n; i++) stones += cell[i] != 0;
    if (stones == 0) return (H / 2) * W + W / 2;
    for (int p = ME; p <= OPP; p++) /* 1. win, 2. block */
        for (int i = 0; i < n; i++)
            if (!cell[i] && wins_at(i, p)) return i;
    for (int i = 0; i < n; i++) /* 3. two completing cells */
        if (!cell[i] && near_stone(i, 2) && threats_after(i, ME) >= 2) return i;

    int top[TOP], nt = 0;
    double topv[TOP];
    for (int i = 0; i < n; i++) {
        if (cell[i] || !near_stone(i, 2)) continue;
        double v = score_at(i);
        int k;
        if (nt < TOP) k = nt++;
        else if (v > topv[TOP - 1]) k = TOP - 1;
        else continue;
        while (k > 0 && topv[k - 1] < v) {
            top[k] = top[k - 1];
            topv[k] = topv[k - 1];
            k--;
        }
        top[k] = i;
        topv[k] = v;
    }
    if (nt == 0) { /* nothing near a stone: any empty cell */
        for (int i = 0; i < n; i++)
            if (!cell[i]) return i;
        return -1;
    }
    for (int k = 0; k < nt; k++) { /* 4. best safe move */
        int i = top[k];
        cell[i] = ME;
        int forcing = 0;
        for (int j = 0; j < n && !forcing; j++)
            if (!cell[j] && wins_at(j, ME)) forcing = 1;
        int safe = forcing || !has_double_threat(OPP);
        cell[i] = 0;
        if (safe) return i;
    }
    return top[0];
}

static void reply_move(void) {
    int i = choose();
    if (i < 0) {
        printf("ERROR the board is full\n");
    } else {
        cell[i] = ME;
        printf("%d,%d\n", i % W, i / W);
    }
    fflush(stdout);
}

static int start(int w, int h) {
    if (w < 1 || h < 1 || w > MAXS || h > MAXS) return 0;
    W = w;
    H = h;
    memset(cell, 0, sizeof cell);
    return 1;
}

int main(void) {
    char line[512];
    pow8[0] = 1;
    for (int k = 1; k < MAXS + 2; k++) pow8[k] = pow8[k - 1] * 8;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        char cmd[32] = {0};
        int k = 0;
        const char *p = line;
        while (*p == ' ') p++;
        while (*p && *p != ' ' && k < 31) cmd[k++] = (char)toupper((unsigned char)*p++);
        const char *arg = p;
        int a, b, f;
        if (!strcmp(cmd, "START")) {
            a = atoi(arg);
            puts(start(a, a) ? "OK" : "ERROR unsupported board size");
        } else if (!strcmp(cmd, "RECTSTART")) {
            puts(sscanf(arg, " %d , %d", &a, &b) == 2 && start(a, b) ? "OK" : "ERROR unsupported board size");
        } else if (!strcmp(cmd, "RESTART")) {
            memset(cell, 0, sizeof cell);
            puts("OK");
        } else if (!strcmp(cmd, "INFO")) {
            char key[64];
            if (sscanf(arg, " %63s %d", key, &a) == 2 && !strcmp(key, "win_length") && a >= 1) L = a;
            continue; /* INFO gets no answer */
        } else if (!strcmp(cmd, "BEGIN")) {
            reply_move();
            continue;
        } else if (!strcmp(cmd, "TURN")) {
            if (sscanf(arg, " %d , %d", &a, &b) == 2 && inside(a, b)) cell[b * W + a] = OPP;
            reply_move();
            continue;
        } else if (!strcmp(cmd, "BOARD")) {
            memset(cell, 0, sizeof cell);
            while (fgets(line, sizeof line, stdin)) {
                line[strcspn(line, "\r\n")] = 0;
                if (!strncmp(line, "DONE", 4)) break;
                if (sscanf(line, " %d , %d , %d", &a, &b, &f) == 3 && inside(a, b))
                    cell[b * W + a] = (unsigned char)(f == 1 ? ME : OPP);
            }
            reply_move();
            continue;
        } else if (!strcmp(cmd, "TAKEBACK")) {
            if (sscanf(arg, " %d , %d", &a, &b) == 2 && inside(a, b)) cell[b * W + a] = 0;
            puts("OK");
        } else if (!strcmp(cmd, "ABOUT")) {
            puts("name=\"threats\", version=\"1.0\", author=\"tourney sample entries\", country=\"-\"");
        } else if (!strcmp(cmd, "END")) {
            return 0;
        } else if (cmd[0]) {
            printf("UNKNOWN command %s\n", cmd);
        }
        fflush(stdout);
    }
    return 0;
}
