/* searcher -- an ICFP'98 Pousse player: iterative-deepening alpha-beta.
 *
 * Usage:  ./runme [--budget-ms N] [--depth D]
 *         stdin: N, then the moves so far, one per line; stdout: one move.
 *
 * Rules as the contest states them: a move that recreates an earlier
 * configuration (board plus side to move) loses for the mover, checked first;
 * otherwise a move that leaves one colour with more straights wins for that
 * colour, even if it is the mover's opponent.
 *
 * Search: negamax alpha-beta, deepened one ply at a time until the budget
 * (default 500 ms of wall time, counted from start-up) is spent or --depth is
 * reached; the best move of the deepest finished iteration is played. A
 * transposition table keeps only the best move of each position (for move
 * ordering): stored scores would be unsound here, because whether a line
 * loses by repetition depends on the path that reached it.
 * Repetitions are detected against the whole game so far plus the current
 * search path, with Zobrist keys.
 *
 * Evaluation (side to move's view): for every row and column, a line held
 * by one colour only is worth 3*k*k for k markers, a mixed one the marker
 * difference; plus a small bonus for markers away from the edges (harder to
 * push off).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
enum { MAXN = 20, EMPTY = 0, XC = 1, OC = 2, WIN = 1000000, INF = 2000000 };

static int N;
static unsigned char B[MAXN * MAXN];
static u64 zob[MAXN * MAXN][3], zob_side;
static u64 hash; /* board plus side to move */

static double t_start, budget_s = 0.5;
static int max_depth = 64, aborted, verbose;
static long long nodes;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static u64 rng_state = 0x2545F4914F6CDD1DULL;
static u64 rnd(void) {
    u64 z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------ history */
/* Every configuration of the game so far (a hash set) plus the search path. */
enum { HIST_BITS = 16 };
static u64 hist[1 << HIST_BITS];
static void hist_add(u64 h) {
    h |= 1; /* 0 marks a free slot */
    size_t m = (1u << HIST_BITS) - 1, i = (size_t)h & m;
    while (hist[i] && hist[i] != h) i = (i + 1) & m;
    hist[i] = h;
}
static int hist_has(u64 h) {
    h |= 1;
    size_t m = (1u << HIST_BITS) - 1, i = (size_t)h & m;
    while (hist[i]) {
        if (hist[i] == h) return 1;
        i = (i + 1) & m;
    }
    return 0;
}
static u64 path[256];
static int path_len;

static int repeated(u64 h) {
    for (int i = path_len - 2; i >= 0; i -= 2) /* same side to move */
        if (path[i] == h) return 1;
    return hist_has(h);
}

/* ------------------------------------------------------------ moves */
/* move m: side m / N (0 L, 1 R, 2 T, 3 B), line m % N (0-based) */
static void line_cells(int m, int *idx) {
    int side = m / N, i = m % N;
    for (int k = 0; k < N; k++) {
        switch (side) {
        case 0: idx[k] = i * N + k; break;
        case 1: idx[k] = i * N + (N - 1 - k); break;
        case 2: idx[k] = k * N + i; break;
        default: idx[k] = (N - 1 - k) * N + i; break;
        }
    }
}

typedef struct {
    unsigned char saved[MAXN];
    u64 hash;
} undo_t;

static void make(int m, int colour, undo_t *u) {
    int idx[MAXN];
    line_cells(m, idx);
    u->hash = hash;
    for (int k = 0; k < N; k++) u->saved[k] = B[idx[k]];
    int gap = N - 1;
    for (int k = 0; k < N; k++)
        if (B[idx[k]] == EMPTY) {
            gap = k;
            break;
        }
    for (int k = gap; k > 0; k--) B[idx[k]] = B[idx[k - 1]];
    B[idx[0]] = (unsigned char)colour;
    for (int k = 0; k <= gap; k++) {
        hash ^= zob[idx[k]][u->saved[k]];
        hash ^= zob[idx[k]][B[idx[k]]];
    }
    hash ^= zob_side;
}

static void unmake(int m, const undo_t *u) {
    int idx[MAXN];
    line_cells(m, idx);
    for (int k = 0; k < N; k++) B[idx[k]] = u->saved[k];
    hash = u->hash;
}

/* Straights of X minus straights of O (only the sign matters to the rules). */
static int straights_diff(void) {
    int d = 0;
    for (int i = 0; i < N; i++) {
        int r = B[i * N], c = B[i];
        for (int k = 1; k < N && r; k++)
            if (B[i * N + k] != r) r = 0;
        for (int k = 1; k < N && c; k++)
            if (B[k * N + i] != c) c = 0;
        d += (r == XC) - (r == OC) + (c == XC) - (c == OC);
    }
    return d;
}

/* ------------------------------------------------------------ evaluation */
static int centre_w[MAXN * MAXN];

static int evaluate(int colour) {
    int s = 0;
    for (int i = 0; i < N; i++) {
        int rx = 0, ro = 0, cx = 0, co = 0;
        for (int k = 0; k < N; k++) {
            int a = B[i * N + k], b = B[k * N + i];
            rx += a == XC;
            ro += a == OC;
            cx += b == XC;
            co += b == OC;
        }
        s += !ro ? 3 * rx * rx : !rx ? -3 * ro * ro : rx - ro;
        s += !co ? 3 * cx * cx : !cx ? -3 * co * co : cx - co;
    }
    for (int c = 0; c < N * N; c++) s += B[c] == XC ? centre_w[c] : B[c] == OC ? -centre_w[c] : 0;
    return colour == XC ? s : -s;
}

/* ------------------------------------------------------------ search */
typedef struct {
    u64 key;
    short best;
} tt_ent;
enum { TT_BITS = 18 };
static tt_ent *tt;

static int search(int depth, int alpha, int beta, int colour, int ply) {
    if ((++nodes & 1023) == 0 && now() - t_start > budget_s) aborted = 1;
    if (aborted) return 0;
    if (depth == 0) return evaluate(colour);
    int moves = 4 * N, order[4 * MAXN], n = 0;
    tt_ent *e = &tt[hash & ((1u << TT_BITS) - 1)];
    int first = e->key == hash ? e->best : -1;
    if (first >= 0) order[n++] = first;
    for (int m = 0; m < moves; m++)
        if (m != first) order[n++] = m;
    int best = -INF, best_move = first >= 0 ? first : 0;
    for (int i = 0; i < n; i++) {
        int m = order[i], score;
        undo_t u;
        make(m, colour, &u);
        if (repeated(hash)) {
            score = -(WIN - ply);
        } else {
            int d = straights_diff();
            if (d != 0) {
                int mine = colour == XC ? d > 0 : d < 0;
                score = mine ? WIN - ply : -(WIN - ply);
            } else {
                path[path_len++] = hash;
                score = -search(depth - 1, -beta, -alpha, 3 - colour, ply + 1);
                path_len--;
            }
        }
        unmake(m, &u);
        if (aborted) return 0;
        if (score > best) {
            best = score;
            best_move = m;
        }
        if (score > alpha) alpha = score;
        if (alpha >= beta) break;
    }
    e->key = hash;
    e->best = (short)best_move;
    return best;
}

static int parse_move(const char *s) {
    while (*s == ' ' || *s == '\t') s++;
    const char *sides = "LRTB";
    char c = *s;
    if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    const char *p = c ? strchr(sides, c) : NULL;
    if (!p) return -1;
    int i = atoi(s + 1);
    if (i < 1 || i > N) return -1;
    return (int)(p - sides) * N + (i - 1);
}

int main(int argc, char **argv) {
    t_start = now();
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--budget-ms")) budget_s = atof(argv[i + 1]) / 1000.0;
        else if (!strcmp(argv[i], "--depth")) max_depth = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--verbose")) verbose = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: runme [--budget-ms N] [--depth D] [--verbose 1]\n");
            return 2;
        }
    }
    if (max_depth < 1) max_depth = 1;
    if (max_depth > 200) max_depth = 200;
    char line[256];
    if (!fgets(line, sizeof line, stdin)) return 1;
    N = atoi(line);
    if (N < 1 || N > MAXN) {
        fprintf(stderr, "board size %d not supported (1..%d)\n", N, MAXN);
        return 1;
    }
    for (int c = 0; c < N * N; c++)
        for (int k = 0; k < 3; k++) zob[c][k] = k ? rnd() : 0;
    zob_side = rnd();
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++) {
            int dr = r < N - 1 - r ? r : N - 1 - r, dc = c < N - 1 - c ? c : N - 1 - c;
            centre_w[r * N + c] = dr < dc ? dr : dc;
        }
    tt = calloc((size_t)1 << TT_BITS, sizeof(tt_ent));
    if (!tt) return 1;

    /* replay the game: configurations are keyed with the side to move */
    int colour = XC;
    hist_add(hash); /* the empty board, X to move */
    while (fgets(line, sizeof line, stdin)) {
        int m = parse_move(line);
        if (m < 0) continue;
        undo_t u;
        make(m, colour, &u);
        colour = 3 - colour;
        hist_add(hash);
    }

    int moves = 4 * N, best_move = -1, root[4 * MAXN];
    for (int m = 0; m < moves; m++) root[m] = m;
    for (int depth = 1; depth <= max_depth; depth++) {
        int alpha = -INF, it_best = -1, it_score = -INF;
        for (int i = 0; i < moves; i++) {
            int m = root[i], score;
            undo_t u;
            make(m, colour, &u);
            if (hist_has(hash)) {
                score = -WIN;
            } else {
                int d = straights_diff();
                if (d != 0) {
                    int mine = colour == XC ? d > 0 : d < 0;
                    score = mine ? WIN : -WIN;
                } else {
                    path_len = 0;
                    path[path_len++] = hash;
                    score = -search(depth - 1, -INF, -alpha, 3 - colour, 1);
                }
            }
            unmake(m, &u);
            if (aborted) break;
            if (score > it_score) {
                it_score = score;
                it_best = m;
            }
            if (score > alpha) alpha = score;
        }
        /* a partial iteration still counts: it searched the previous best
           first, so anything it prefers scored better than that */
        if (it_best >= 0) best_move = it_best;
        if (verbose)
            fprintf(stderr, "depth %d%s best %c%d score %d nodes %lld %.3fs\n", depth, aborted ? " (partial)" : "",
                    "LRTB"[best_move / N], best_move % N + 1, it_score, nodes, now() - t_start);
        if (aborted) break;
        /* next iteration: best first */
        for (int i = 0; i < moves; i++)
            if (root[i] == it_best) {
                int t = root[i];
                memmove(&root[1], &root[0], sizeof(int) * (size_t)i);
                root[0] = t;
                break;
            }
        if (it_score >= WIN - 64 || it_score <= -(WIN - 64)) break; /* decided */
    }
    if (best_move < 0) best_move = 0;
    printf("%c%d\n", "LRTB"[best_move / N], best_move % N + 1);
    fflush(stdout);
    return 0;
}
