/* greedy -- an m,n,k player: win now, else block, else stay central and close.
 *
 * Usage:  a.out [--seed N]
 *         stdin: "W H K", then the moves so far as "x y" (1-based column,
 *         row), X first; stdout: one "x y" line.
 *
 * 1. If a cell completes K (or more) in a row for us, take it.
 * 2. Else if the opponent has such a cell, take it (block; with two, the
 *    first one -- the game is lost anyway).
 * 3. Else take the cell with the most of our own stones among its eight
 *    neighbours (twice as much) plus the opponent's, and among those the one
 *    nearest the centre. Ties: the first in reading order, or with --seed N
 *    one picked by a hash of N and the position.
 * No look-ahead beyond one move.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXS = 64 };
static int W, H, K;
static unsigned char cell[MAXS * MAXS];

static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int run_len(int x, int y, int dx, int dy, int p) {
    int n = 0;
    for (x += dx, y += dy; x >= 0 && x < W && y >= 0 && y < H && cell[y * W + x] == p; x += dx, y += dy) n++;
    return n;
}

static int wins_at(int i, int p) {
    static const int D[4][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};
    int x = i % W, y = i / W;
    for (int d = 0; d < 4; d++)
        if (1 + run_len(x, y, D[d][0], D[d][1], p) + run_len(x, y, -D[d][0], -D[d][1], p) >= K) return 1;
    return 0;
}

int main(int argc, char **argv) {
    int seeded = 0;
    uint64_t seed = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seeded = 1;
            seed = mix64(strtoull(argv[++i], NULL, 10));
        } else {
            fprintf(stderr, "usage: a.out [--seed N]\n");
            return 2;
        }
    }
    if (scanf("%d %d %d", &W, &H, &K) != 3 || W < 1 || H < 1 || W > MAXS || H > MAXS) {
        fprintf(stderr, "expected 'W H K' with sides 1..%d\n", MAXS);
        return 1;
    }
    int x, y, n = 0;
    uint64_t pos = mix64((uint64_t)(W * 4096 + H * 64 + K));
    while (scanf("%d %d", &x, &y) == 2) {
        if (x >= 1 && y >= 1 && x <= W && y <= H) cell[(y - 1) * W + (x - 1)] = (unsigned char)(n % 2 + 1);
        pos = mix64(pos ^ (uint64_t)(x * 4096 + y));
        n++;
    }
    int me = n % 2 + 1, them = 3 - me, best = -1;
    for (int pass = 0; pass < 2 && best < 0; pass++)
        for (int i = 0; i < W * H && best < 0; i++)
            if (!cell[i] && wins_at(i, pass == 0 ? me : them)) best = i;
    if (best < 0) {
        long best_score = -1;
        uint64_t best_tie = 0;
        for (int i = 0; i < W * H; i++) {
            if (cell[i]) continue;
            int cx = i % W, cy = i / W, near = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int nx = cx + dx, ny = cy + dy;
                    if ((dx || dy) && nx >= 0 && nx < W && ny >= 0 && ny < H)
                        near += cell[ny * W + nx] == me ? 2 : cell[ny * W + nx] == them ? 1 : 0;
                }
            /* distance to the centre, doubled to stay integral */
            long dist = labs(2L * cx - (W - 1)) + labs(2L * cy - (H - 1));
            long score = near * 1000L + (1000 - dist);
            uint64_t tie = seeded ? mix64(seed ^ pos ^ (uint64_t)i) : 0;
            if (score > best_score || (score == best_score && tie > best_tie)) {
                best_score = score;
                best_tie = tie;
                best = i;
            }
        }
    }
    if (best < 0) {
        fprintf(stderr, "the board is full\n");
        return 1;
    }
    printf("%d %d\n", best % W + 1, best / W + 1);
    return 0;
}
