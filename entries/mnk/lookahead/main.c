/* lookahead -- the TRYST'98 m,n,k look-ahead player (seed 004), for the mnk
 * text protocol.
 *
 * Usage:  a.out [--foresight F] [--draw-value DV] [--order centre|scan]
 *               [--max-work N]
 *         stdin: "W H K", then the moves so far as "x y" (1-based column,
 *         row), X first; stdout: one "x y" line.
 *
 * The algorithm is the seed's, with the side to move as "the computer":
 *  - the value of a position is the probability that the computer wins;
 *  - the opponent ("user") is modelled as in the seed's ASSUMPTIONS: it takes
 *    an immediate win if it has one (the node is then worth exactly 0),
 *    otherwise it plays uniformly at random among the empty cells (the node
 *    is the average of its children);
 *  - the computer takes the maximum over its moves; an immediate win is 1,
 *    a full board without a line is worth the draw value DV (0 attacking ..
 *    1 defensive, default 0.5);
 *  - one level of foresight is a computer move plus the user's reply; after
 *    F levels an undecided position is worth 0.5 (ASSUMPTION 2);
 *  - among moves of equal value the last one checked is played ("places the
 *    move at the last position checked"); values within 1e-9 count as equal,
 *    so that floating-point summation order cannot break a tie. The seed
 *    does not say in which order positions are checked. --order scan checks
 *    them as a plain double loop would, column by column (x = 1..W, y = 1..H
 *    within a column), so ties go to the bottom-right; --order centre (the
 *    default) checks the cells farthest from the centre first, so ties go to
 *    the most central cell. Quiet positions are full of ties (every move
 *    that threatens nothing is worth the same), so this choice decides most
 *    of the opening and makes the difference between losing and winning
 *    against a simple centre-seeking player.
 *
 * What makes it fast without changing any value:
 *  - for each player the set of cells that would win at once is kept up to
 *    date incrementally (only cells at the ends of the lines through a
 *    changed cell can change), so "can the user win now?" is O(1), and the
 *    last level has a closed form;
 *  - forced positions are short-circuited: a computer that can win is worth
 *    1, two user threats are worth 0, one user threat leaves only the block;
 *  - alpha-beta bounds through max and average nodes (Ballard's Star1: every
 *    value lies in [0, 1]), with a transposition table of bounds;
 *  - positions symmetric under a reflection or rotation of the board
 *    evaluate each orbit of moves once (at the root and on deep levels).
 * Work, not time: the seed describes a fixed "level of foresight" and no
 * clock, so the player plays level F, and the same position always gives the
 * same move however busy the machine is. Levels 1, 2, .. F are computed in
 * turn (each orders the next one's moves); a work budget, counted in
 * positions examined (--max-work N, default 5,000,000: about 1.5 s of one
 * core, where foresight 3 on 9x9 needs at most about 2,000,000), stops a
 * search that could not end in any reasonable time (foresight 3 on 20x20).
 * It is a count, never a clock: if it stops level F, the deepest finished
 * level is played and one line on stderr says so ("lookahead: the work
 * budget (--max-work 5000000 positions) cut the search: played foresight 2
 * of 3"), the same line on every machine. (--move-time-ms and --budget-ms,
 * the clock of earlier versions, are accepted and ignored.) F may be any level the seed
 * allows, 1..W*H/2 (200 on 20x20): outside 1..512 (the largest board's) it is
 * refused (exit 2, a line on stderr); above a smaller board's W*H/2 that
 * board's most is played, which searches the whole board, and stderr says so. On boards up to about
 * 10x10 foresight 3 finishes within the default budget; on 20x20 foresight 2 does.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
enum { MAXS = 32, MAXC = MAXS * MAXS, COMP = 1, USER = 2 };
#define EPS 1e-9

static int W, H, K, NC;
static unsigned char cell[MAXC];
static unsigned char winc[3][MAXC]; /* winc[p][i]: p wins at once by playing i */
static int nwin[3];
static int empties;
static double dv = 0.5;
static u64 zob[MAXC][3], hash;

/* The work budget (see "Work" above): positions placed, counted by place(). A count, not a
   clock, so that the same position gives the same move however busy the machine is. */
static long long work, max_work = 5000000LL;
static int aborted;

static double now(void) { /* only for --verbose: never decides anything */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double t_start;

static const int DX[8] = {1, 0, 1, 1, -1, 0, -1, -1};
static const int DY[8] = {0, 1, 1, -1, 0, -1, -1, 1};

/* ------------------------------------------------------------ threats */
static int run_len(int x, int y, int dx, int dy, int p) {
    int n = 0;
    x += dx;
    y += dy;
    while (x >= 0 && x < W && y >= 0 && y < H && cell[y * W + x] == p) {
        n++;
        x += dx;
        y += dy;
    }
    return n;
}

static void recompute(int i) {
    int x = i % W, y = i / W;
    for (int p = 1; p <= 2; p++) {
        int w = 0;
        if (cell[i] == 0)
            for (int d = 0; d < 4 && !w; d++)
                if (1 + run_len(x, y, DX[d], DY[d], p) + run_len(x, y, DX[d + 4], DY[d + 4], p) >= K) w = 1;
        if (w != winc[p][i]) {
            nwin[p] += w ? 1 : -1;
            winc[p][i] = (unsigned char)w;
        }
    }
}

/* After cell i changed to or from p: i itself, and the first cell beyond the
   run of p through i in each direction, are the only cells whose threat
   status can change. */
static void touch(int i, int p) {
    int x0 = i % W, y0 = i / W;
    recompute(i);
    for (int d = 0; d < 8; d++) {
        int x = x0 + DX[d], y = y0 + DY[d];
        while (x >= 0 && x < W && y >= 0 && y < H && cell[y * W + x] == p) {
            x += DX[d];
            y += DY[d];
        }
        if (x >= 0 && x < W && y >= 0 && y < H && cell[y * W + x] == 0) recompute(y * W + x);
    }
}

static int stones[3];

static void place(int i, int p) {
    work++;
    cell[i] = (unsigned char)p;
    stones[p]++;
    empties--;
    hash ^= zob[i][p];
    touch(i, p);
}

static void unplace(int i, int p) {
    cell[i] = 0;
    stones[p]--;
    empties++;
    hash ^= zob[i][p];
    touch(i, p);
}

/* ------------------------------------------------------------ symmetry */
/* The 8 symmetries of the board (4 on a rectangle); t = 0 is the identity. */
static int sym_map(int t, int i) {
    int x = i % W, y = i / W, nx, ny;
    switch (t) {
    case 0: nx = x; ny = y; break;
    case 1: nx = W - 1 - x; ny = y; break;
    case 2: nx = x; ny = H - 1 - y; break;
    case 3: nx = W - 1 - x; ny = H - 1 - y; break;
    case 4: nx = y; ny = x; break;
    case 5: nx = H - 1 - y; ny = x; break;
    case 6: nx = y; ny = W - 1 - x; break;
    default: nx = H - 1 - y; ny = W - 1 - x; break;
    }
    return ny * W + nx;
}

/* Symmetries that leave the position unchanged; returns how many (>= 1). */
static int board_symmetries(int *syms) {
    int n = 0;
    syms[n++] = 0;
    for (int t = 1; t < 8; t++) {
        if (t >= 4 && W != H) break;
        int ok = 1;
        for (int i = 0; i < NC && ok; i++)
            if (cell[i] != cell[sym_map(t, i)]) ok = 0;
        if (ok) syms[n++] = t;
    }
    return n;
}

/* orbit[i]: the representative (smallest index) of i's orbit, weight[rep]:
   the orbit's size; only empty cells. */
static void orbits(const int *syms, int nsym, int *rep, int *weight) {
    for (int i = 0; i < NC; i++) weight[i] = 0;
    for (int i = 0; i < NC; i++) {
        if (cell[i]) continue;
        int r = i;
        for (int s = 1; s < nsym; s++) {
            int j = sym_map(syms[s], i);
            if (j < r) r = j;
        }
        rep[i] = r;
        weight[r]++;
    }
}

/* ------------------------------------------------------------ transposition table */
enum { TT_BITS = 20, EXACT = 0, LOWER = 1, UPPER = 2 };
typedef struct {
    u64 key;
    double v;
    short depth; /* up to W*H/2 = 512 levels: more than a signed char holds */
    signed char flag;
} tt_ent;
static tt_ent *tt;

/* ------------------------------------------------------------ the tree */
static double comp_node(int d, double alpha, double beta);

/* Could a user stone on u give some empty cell a user line of K? Only if a
   user stone lies within K-1 cells of u along a line (or K <= 2). */
static int near_user(int u) {
    if (K <= 2) return 1;
    int x0 = u % W, y0 = u / W;
    for (int d = 0; d < 8; d++) {
        int x = x0, y = y0;
        for (int s = 1; s < K; s++) {
            x += DX[d];
            y += DY[d];
            if (x < 0 || x >= W || y < 0 || y >= H) break;
            if (cell[y * W + x] == USER) return 1;
        }
    }
    return 0;
}

/* user_node for d == 2 in closed form: each reply u leads to the last level,
   whose value is 1 if the computer still has a winning cell, 0 if u gave
   the user two, else 0.5 (or DV when at most two cells are left). */
static double user_node2(void) {
    int E = empties;
    if (nwin[COMP] >= 2) return 1.0; /* u blocks at most one */
    double last = E - 1 <= 2 ? dv : 0.5, sum = 0.0;
    int forks_possible = stones[USER] + 1 >= K - 1;
    for (int u = 0; u < NC; u++) {
        if (cell[u]) continue;
        work++;
        if (E == 1) {
            sum += dv; /* the user's move fills the board */
        } else if (nwin[COMP] - winc[COMP][u] > 0) {
            sum += 1.0;
        } else if (!forks_possible || !near_user(u)) {
            sum += last;
        } else {
            place(u, USER);
            sum += nwin[USER] >= 2 ? 0.0 : last;
            unplace(u, USER);
        }
    }
    return sum / E;
}

/* The computer has just moved (without winning); the user is to move with d
   levels left, counting this one. */
static double user_node(int d, double alpha, double beta) {
    if (empties == 0) return dv;
    if (nwin[USER] > 0) return 0.0; /* the user takes its win */
    if (d == 1) return empties == 1 ? dv : 0.5;
    if (d == 2) return user_node2();
    if (work > max_work) aborted = 1;
    if (aborted) return 0.5;

    int syms[8], nsym = 1;
    static int rep_buf[64][MAXC], weight_buf[64][MAXC];
    int *rep = NULL, *weight = NULL;
    if (d >= 3 && d < 64) {
        nsym = board_symmetries(syms);
        if (nsym > 1) {
            rep = rep_buf[d];
            weight = weight_buf[d];
            orbits(syms, nsym, rep, weight);
        }
    }
    double total = empties, sum = 0.0, left = empties;
    for (int i = 0; i < NC; i++) {
        if (cell[i]) continue;
        double w = 1.0;
        if (rep) {
            if (rep[i] != i) continue;
            w = weight[i];
        }
        left -= w;
        /* window for this child so that the average can still land inside */
        double ca = (alpha * total - sum - left) / w, cb = (beta * total - sum) / w;
        place(i, USER);
        double v = empties == 0 ? dv : comp_node(d - 1, ca > 0 ? ca : 0, cb < 1 ? cb : 1);
        unplace(i, USER);
        if (aborted) return 0.5;
        sum += w * v;
        if ((sum + left) / total < alpha) return (sum + left) / total; /* fail low */
        if (sum / total > beta) return sum / total;                     /* fail high */
    }
    return sum / total;
}

/* comp_node for d == 2 when neither side has a winning cell.
   A move that makes a threat is cheap to value (user_node2 needs one cell
   update). A quiet move m is worth last * (E' - F(m)) / E', where F(m) counts
   the user replies that make two user threats; a computer stone only ever
   removes such forks, so the forks are listed once and only rechecked with
   m on the board. Quiet moves are worth at most max(0.5, DV), so they are
   skipped when a threatening move already reaches that. */
static double comp_level2(double beta) {
    static unsigned char quiet[MAXC];
    static int forks[MAXC];
    double best = -1.0;
    int any_quiet = 0;
    for (int i = 0; i < NC; i++) {
        if (cell[i]) continue;
        place(i, COMP);
        quiet[i] = nwin[COMP] == 0;
        double v = quiet[i] ? -1.0 : user_node2();
        unplace(i, COMP);
        any_quiet |= quiet[i];
        if (v > best) best = v;
        if (best >= beta) return best;
    }
    if (!any_quiet || best >= (dv > 0.5 ? dv : 0.5)) return best;
    int Ep = empties - 1; /* cells left after the computer's move */
    if (Ep <= 1) return best > dv ? best : dv; /* full board, or the user fills it */
    double last = Ep - 1 <= 2 ? dv : 0.5;
    int nf = 0;
    if (stones[USER] + 1 >= K - 1)
        for (int u = 0; u < NC; u++) {
            if (cell[u] || !near_user(u)) continue;
            place(u, USER);
            if (nwin[USER] >= 2) forks[nf++] = u;
            unplace(u, USER);
        }
    for (int i = 0; i < NC; i++) {
        if (cell[i] || !quiet[i]) continue;
        work++;
        int F = 0;
        if (nf) {
            place(i, COMP);
            for (int j = 0; j < nf; j++) {
                if (forks[j] == i) continue;
                place(forks[j], USER);
                F += nwin[USER] >= 2;
                unplace(forks[j], USER);
            }
            unplace(i, COMP);
        }
        double v = last * (double)(Ep - F) / (double)Ep;
        if (v > best) best = v;
        if (best >= beta) break;
    }
    return best;
}

/* The computer is to move with d levels left (d >= 1); the user has no win. */
static double comp_node(int d, double alpha, double beta) {
    if (nwin[COMP] > 0) return 1.0;
    if (nwin[USER] >= 2) return 0.0; /* one move cannot block two */
    if (d == 1 && nwin[USER] <= 1) /* closed form of the last level */
        return empties <= 2 ? dv : 0.5;
    /* a level-2 node already costs ~E*E cell updates: look at the count each time */
    if (work > max_work) aborted = 1;
    if (aborted) return 0.5;
    tt_ent *e = &tt[(hash ^ (u64)d * 0x9E3779B97F4A7C15ULL) & ((1u << TT_BITS) - 1)];
    if (e->key == hash && e->depth == d) {
        double v = e->v;
        if (e->flag == EXACT) return v;
        if (e->flag == LOWER && v >= beta) return v;
        if (e->flag == UPPER && v <= alpha) return v;
    }
    double a0 = alpha, best = -1.0;
    if (nwin[USER] == 1) { /* only the block avoids 0 */
        int b = 0;
        while (!winc[USER][b]) b++;
        place(b, COMP);
        best = user_node(d, alpha, beta);
        unplace(b, COMP);
    } else {
        int syms[8], nsym = 1;
        static int rep_buf[64][MAXC], weight_buf[64][MAXC];
        int *rep = NULL;
        if (d >= 3 && d < 64) {
            nsym = board_symmetries(syms);
            if (nsym > 1) {
                rep = rep_buf[d];
                orbits(syms, nsym, rep, weight_buf[d]);
            }
        }
        if (d == 2) {
            best = comp_level2(beta);
        } else {
            /* threatening moves first: they raise alpha soonest */
            for (int pass = 0; pass < 2 && best < beta; pass++)
                for (int i = 0; i < NC; i++) {
                    if (cell[i] || (rep && rep[i] != i)) continue;
                    place(i, COMP);
                    double v = -1.0;
                    if ((nwin[COMP] > 0) == (pass == 0)) v = user_node(d, alpha > best ? alpha : best, beta);
                    unplace(i, COMP);
                    if (aborted) return 0.5;
                    if (v > best) best = v;
                    if (best >= beta) break;
                }
        }
    }
    if (aborted) return 0.5;
    e->key = hash;
    e->depth = (short)d;
    e->v = best;
    e->flag = best <= a0 ? UPPER : best >= beta ? LOWER : EXACT;
    return best;
}

/* One full root evaluation at foresight f; returns the chosen cell or -1 if
   time ran out. */
static double prev_val[MAXC]; /* the previous level's values: search order */

/* The order in which moves count as "checked" (the seed leaves it open):
   scan: column by column, x = 1..W and y = 1..H within a column, as a
   plain double loop would; centre: farthest from the centre first (scan
   order among equals), so that ties go to the most central cell. */
static int check_order[MAXC];
static long centre_dist(int i) {
    long dx = 2L * (i % W) - (W - 1), dy = 2L * (i / W) - (H - 1);
    return dx * dx + dy * dy;
}
static int scan_index(int i) { return (i % W) * H + i / W; }
static int by_centre(const void *a, const void *b) {
    int i = *(const int *)a, j = *(const int *)b;
    long di = centre_dist(i), dj = centre_dist(j);
    if (di != dj) return di > dj ? -1 : 1;
    return scan_index(i) - scan_index(j);
}
static void make_check_order(int centre) {
    for (int i = 0; i < NC; i++) check_order[scan_index(i)] = i;
    if (centre) qsort(check_order, (size_t)NC, sizeof(int), by_centre);
}

static int by_prev(const void *a, const void *b) {
    int i = *(const int *)a, j = *(const int *)b;
    if (prev_val[i] != prev_val[j]) return prev_val[i] > prev_val[j] ? -1 : 1;
    return i - j;
}

static int root_choice(int f, double *value) {
    int syms[8], nsym = board_symmetries(syms);
    static int rep[MAXC], weight[MAXC], order[MAXC];
    static double val[MAXC];
    static unsigned char pruned[MAXC];
    orbits(syms, nsym, rep, weight);
    int n = 0;
    for (int i = 0; i < NC; i++)
        if (!cell[i] && rep[i] == i) order[n++] = i;
    /* any order gives the same choice (ties are settled below by position);
       the best moves first only make the pruning stronger */
    qsort(order, (size_t)n, sizeof(int), by_prev);
    double best = -1.0;
    for (int k = 0; k < n; k++) {
        {
            int i = order[k];
            double v;
            if (winc[COMP][i]) {
                v = 1.0;
            } else {
                place(i, COMP);
                v = user_node(f, best - EPS, 2.0);
                unplace(i, COMP);
            }
            if (aborted) return -1;
            pruned[i] = v < best - EPS;
            val[i] = v;
            if (!pruned[i] && v > best) best = v;
        }
    }
    for (int i = 0; i < NC; i++)
        if (!cell[i]) prev_val[i] = pruned[rep[i]] ? -1.0 : val[rep[i]];
    int choice = -1;
    for (int k = 0; k < NC; k++) {
        int i = check_order[k];
        if (cell[i]) continue;
        int r = rep[i];
        if (!pruned[r] && val[r] >= best - EPS) choice = i; /* the last one checked */
    }
    *value = best;
    return choice;
}

int main(int argc, char **argv) {
    t_start = now();
    int foresight = 2, verbose = 0, centre = 1;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) goto usage;
        if (!strcmp(argv[i], "--foresight")) foresight = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--draw-value")) dv = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-work")) {
            max_work = atoll(argv[++i]);
            if (max_work < 1) goto usage;
        }
        /* older configs' clock options: accepted, never used (a clock made moves depend on load) */
        else if (!strcmp(argv[i], "--budget-ms") || !strcmp(argv[i], "--move-time-ms")) ++i;
        else if (!strcmp(argv[i], "--verbose")) verbose = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--order")) {
            i++;
            if (!strcmp(argv[i], "scan")) centre = 0;
            else if (!strcmp(argv[i], "centre")) centre = 1;
            else goto usage;
        }
        else goto usage;
    }
    /* seed 004: "Level of foresight = mm ( 1.. nnx * nny / 2 )". Any level in the range is
       honoured (bounded only by the work budget, which says so when it cuts the search); one
       outside it is refused with a message, never silently changed. */
    if (foresight < 1 || foresight > MAXC / 2) {
        fprintf(stderr, "lookahead: --foresight %d is outside 1..%d (seed 004: 1..nnx*nny/2)\n", foresight,
                MAXC / 2);
        return 2;
    }
    if (!(dv >= 0.0 && dv <= 1.0)) dv = 0.5;

    if (scanf("%d %d %d", &W, &H, &K) != 3 || W < 1 || H < 1 || W > MAXS || H > MAXS || K < 1) {
        fprintf(stderr, "expected 'W H K' with 1 <= W, H <= %d on the first line\n", MAXS);
        return 1;
    }
    NC = W * H;
    empties = NC;
    int board_most = NC > 1 ? NC / 2 : 1;
    if (foresight > board_most) { /* the whole board is searched at that level: deeper adds nothing */
        fprintf(stderr, "lookahead: foresight %d is above %d, the most this %dx%d board allows "
                        "(seed 004: 1..nnx*nny/2): played foresight %d\n", foresight, board_most, W, H, board_most);
        foresight = board_most;
    }
    u64 s = 0x853C49E6748FEA9BULL;
    for (int i = 0; i < NC; i++)
        for (int p = 1; p <= 2; p++) {
            s += 0x9E3779B97F4A7C15ULL;
            u64 z = s;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            zob[i][p] = z ^ (z >> 31);
        }
    /* the moves so far, as X / O; then relabel: the side to move is COMP */
    int moves = 0, x, y;
    static int mv[MAXC];
    while (scanf("%d %d", &x, &y) == 2) {
        if (x < 1 || y < 1 || x > W || y > H || moves >= NC) continue;
        mv[moves++] = (y - 1) * W + (x - 1);
    }
    for (int m = 0; m < moves; m++) {
        if (cell[mv[m]]) continue;
        int side_x = m % 2 == 0, me_x = moves % 2 == 0;
        place(mv[m], side_x == me_x ? COMP : USER);
    }
    if (empties == 0) {
        fprintf(stderr, "the board is full\n");
        return 1;
    }
    for (int i = 0; i < NC; i++) recompute(i);
    tt = calloc((size_t)1 << TT_BITS, sizeof(tt_ent));
    if (!tt) return 1;
    make_check_order(centre);

    int choice = -1, finished = 0;
    for (int f = 1; f <= foresight; f++) {
        double v;
        int c = root_choice(f, &v);
        if (c < 0) break;
        choice = c;
        finished = f;
        if (verbose) fprintf(stderr, "foresight %d: %d %d value %.6f (%.3f s)\n", f, c % W + 1, c / W + 1, v, now() - t_start);
    }
    if (finished < foresight) /* the work budget ran out: say so, never silently play shallower */
        fprintf(stderr, "lookahead: the work budget (--max-work %lld positions) cut the search: played "
                        "foresight %d of %d\n", max_work, finished, foresight);
    if (verbose) fprintf(stderr, "work: %lld positions\n", work);
    if (choice < 0) { /* not even level 1 finished: any empty cell */
        for (int i = 0; i < NC; i++)
            if (!cell[i]) choice = i;
    }
    printf("%d %d\n", choice % W + 1, choice / W + 1);
    fflush(stdout);
    return 0;
usage:
    fprintf(stderr, "usage: a.out [--foresight F] [--draw-value DV] [--order centre|scan] "
                    "[--max-work N]\n");
    return 2;
}
