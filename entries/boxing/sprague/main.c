/* sprague -- a Boxing player (POTM, January 1994) built on Sprague-Grundy theory.
 *
 * Usage:  a.out MARK [--level 1|2] [--budget-ms N] [--solve-max N] [--seed N]
 *         stdin: the arena, stdout: the arena plus one new square box of MARK.
 *
 * Why Sprague-Grundy: both players have the same moves and whoever fills the
 * last vacant cell wins, so Boxing is an impartial game under normal play.
 * Every position has a Grundy value; the player to move wins iff the XOR of
 * the values of its independent parts is non-zero, and a winning move is one
 * that makes the XOR zero.
 *
 * How the position is split into independent parts:
 *  - a vacant cell that lies in no vacant 2x2 square can only ever be taken by
 *    a 1x1 box and never touches any other box: it is a nim heap of size 1
 *    (a "thin" cell; together they contribute their count mod 2);
 *  - the other ("thick") cells fall apart into 4-connected components, which
 *    are independent games: a box of side >= 2 is a union of 2x2 squares, all
 *    inside one component, and taking cells only ever makes cells thinner.
 * Components are memoised by shape, up to the 8 symmetries of the square.
 *
 * Components too big to solve within the time budget are "unknown", except
 *  - two congruent components cancel (g ^ g = 0), and
 *  - a component that some non-trivial isometry sigma maps onto itself, such
 *    that no box inside it meets its own image, has value 0: the second
 *    player answers every box B with sigma(B). This is how an empty or
 *    symmetric arena is won from the first move (take a central box, then
 *    mirror).
 *
 * Move choice (two players): if some move leads to a position known to be
 * zero, play the biggest such box (the winner's score is its own marks).
 * Otherwise, if the current position is known to be lost, play the move that
 * leaves the opponent the fewest winning replies; if it is unknown, play the
 * biggest box whose result is still unknown (this shrinks the arena towards
 * the region where we can solve it, usually one move before the opponent).
 * With three or more players (the N! tiebreak games) the theory does not
 * apply: finish the game if one box can, avoid leaving a single square for
 * the next player, else take the biggest box.
 *
 * Options: --budget-ms N bounds the thinking time per move (default 50 ms,
 * counted from start-up; the best move found so far is played when it runs
 * out). --solve-max N is the largest component (in thick cells) that is
 * solved exactly (default 28). --level 1 only plays perfectly once the
 * whole position is solvable and takes the biggest box before that (no
 * symmetry rule, no scan of moves). --seed N changes how equally good boxes
 * are chosen (a function of N and the arena, so reruns replay the game).
 * Arenas wider or taller than 64 cells get the biggest-box fallback.
 * It keeps no state between moves (no /tmp/arena.MARK file).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
enum { MAXD = 64, UNK = -1, ABORT = -2 };

/* ------------------------------------------------------------------ options */
static int opt_level = 2;
static double opt_budget_s = 0.05;
static int opt_solve_max = 28;
static int opt_seeded = 0;
static u64 opt_seed = 0;

/* ------------------------------------------------------------------ time */
static double t_start;
static int timed_out;
static long long nodes;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int out_of_time(void) {
    if (timed_out) return 1;
    if ((++nodes & 127) == 0 && now() - t_start > opt_budget_s) timed_out = 1;
    return timed_out;
}

/* ------------------------------------------------------------------ hashing */
static u64 mix64(u64 z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ shapes */
typedef struct {
    int h, w;
    u64 r[MAXD]; /* r[y] bit x */
} shape;

static int popcount_rows(const u64 *r, int h) {
    int n = 0;
    for (int y = 0; y < h; y++) n += __builtin_popcountll(r[y]);
    return n;
}

/* Translate the cells of r (h rows) so that the bounding box starts at 0,0. */
static void normalize(const u64 *r, int h, shape *out) {
    int y0 = -1, y1 = -1, x0 = 64, x1 = -1;
    for (int y = 0; y < h; y++) {
        if (!r[y]) continue;
        if (y0 < 0) y0 = y;
        y1 = y;
        int lo = __builtin_ctzll(r[y]), hi = 63 - __builtin_clzll(r[y]);
        if (lo < x0) x0 = lo;
        if (hi > x1) x1 = hi;
    }
    if (y0 < 0) {
        out->h = out->w = 0;
        return;
    }
    out->h = y1 - y0 + 1;
    out->w = x1 - x0 + 1;
    for (int y = 0; y < out->h; y++) out->r[y] = r[y0 + y] >> x0;
}

static void map_point(int t, int h, int w, int x, int y, int *nx, int *ny) {
    switch (t) {
    case 0: *nx = x; *ny = y; break;
    case 1: *nx = w - 1 - x; *ny = y; break;
    case 2: *nx = x; *ny = h - 1 - y; break;
    case 3: *nx = w - 1 - x; *ny = h - 1 - y; break;
    case 4: *nx = y; *ny = x; break;
    case 5: *nx = h - 1 - y; *ny = x; break;
    case 6: *nx = y; *ny = w - 1 - x; break;
    default: *nx = h - 1 - y; *ny = w - 1 - x; break;
    }
}

static void transform(const shape *s, int t, shape *out) {
    out->h = t < 4 ? s->h : s->w;
    out->w = t < 4 ? s->w : s->h;
    memset(out->r, 0, sizeof(u64) * (size_t)out->h);
    for (int y = 0; y < s->h; y++) {
        u64 b = s->r[y];
        while (b) {
            int x = __builtin_ctzll(b), nx, ny;
            b &= b - 1;
            map_point(t, s->h, s->w, x, y, &nx, &ny);
            out->r[ny] |= 1ULL << nx;
        }
    }
}

static void hash_shape(const shape *s, u64 *k1, u64 *k2) {
    u64 a = mix64((u64)s->h * 1000003ULL + (u64)s->w);
    u64 b = mix64(a ^ 0x5851F42D4C957F2DULL);
    for (int y = 0; y < s->h; y++) {
        a = mix64(a ^ s->r[y]);
        b = mix64(b + s->r[y] * 0xD6E8FEB86659FD93ULL + (u64)y);
    }
    *k1 = a | 1; /* 0 marks an empty memo slot */
    *k2 = b;
}

/* The key of a shape's class under the 8 symmetries: the smallest hash. */
static void canonical_key(const shape *s, u64 *k1, u64 *k2) {
    shape t;
    hash_shape(s, k1, k2);
    for (int i = 1; i < 8; i++) {
        u64 a, b;
        transform(s, i, &t);
        hash_shape(&t, &a, &b);
        if (a < *k1 || (a == *k1 && b < *k2)) {
            *k1 = a;
            *k2 = b;
        }
    }
}

/* ------------------------------------------------------------------ memo */
typedef struct {
    u64 k1, k2;
    int v; /* Grundy value, or UNK for a big component with no known value */
} memo_ent;

enum { MEMO_BITS = 20 };
static memo_ent *memo;
static size_t memo_used;

static memo_ent *memo_slot(u64 k1, u64 k2) {
    size_t mask = ((size_t)1 << MEMO_BITS) - 1, i = (size_t)(k1 ^ (k2 >> 7)) & mask;
    for (;;) {
        if (memo[i].k1 == 0 || (memo[i].k1 == k1 && memo[i].k2 == k2)) return &memo[i];
        i = (i + 1) & mask;
    }
}

static int memo_get(u64 k1, u64 k2, int *v) {
    memo_ent *e = memo_slot(k1, k2);
    if (e->k1 == 0) return 0;
    *v = e->v;
    return 1;
}

static void memo_put(u64 k1, u64 k2, int v) {
    if (memo_used * 10 > ((size_t)7 << MEMO_BITS)) return; /* keep probing short */
    memo_ent *e = memo_slot(k1, k2);
    if (e->k1 == 0) memo_used++;
    e->k1 = k1;
    e->k2 = k2;
    e->v = v;
}

/* ------------------------------------------------------------------ squares */
/* Largest s such that the s x s square with top-left (x,y) lies in r. */
static int max_square(const u64 *r, int h, int w, int x, int y, int cap) {
    int s = 0;
    while (s < cap && y + s < h && x + s < w) {
        int n = s + 1;
        u64 m = (n >= 64 ? ~0ULL : ((1ULL << n) - 1)) << x;
        int ok = 1;
        for (int i = 0; i < n && ok; i++)
            if ((r[y + i] & m) != m) ok = 0;
        if (!ok) break;
        s = n;
    }
    return s;
}

/* thick[y]: the cells of r that lie in some 2x2 square of r. */
static void thick_cells(const u64 *r, int h, u64 *thick) {
    for (int y = 0; y < h; y++) thick[y] = 0;
    for (int y = 0; y + 1 < h; y++) {
        u64 t = r[y] & r[y + 1];
        u64 p = t & (t >> 1);
        p |= p << 1;
        thick[y] |= p;
        thick[y + 1] |= p;
    }
}

/* Extract the 4-connected component of mask (h rows) that contains the lowest
   cell of row y0, removing it from mask. */
static void take_component(u64 *mask, int h, int y0, u64 *comp) {
    for (int y = 0; y < h; y++) comp[y] = 0;
    comp[y0] = mask[y0] & (~mask[y0] + 1);
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int y = 0; y < h; y++) {
            u64 c = comp[y];
            u64 g = c | (c << 1) | (c >> 1);
            if (y > 0) g |= comp[y - 1];
            if (y + 1 < h) g |= comp[y + 1];
            g &= mask[y];
            if (g != c) {
                comp[y] = g;
                changed = 1;
            }
        }
    }
    for (int y = 0; y < h; y++) mask[y] &= ~comp[y];
}

/* ------------------------------------------------------------------ exact solver */
static int comp_value(const shape *c);

/* Grundy value of an arbitrary set of cells; ABORT when out of time. */
static int set_value(const u64 *r, int h) {
    u64 thick[MAXD], comp[MAXD];
    thick_cells(r, h, thick);
    int v = 0;
    for (int y = 0; y < h; y++) v ^= __builtin_popcountll(r[y] & ~thick[y]) & 1;
    for (int y = 0; y < h; y++) {
        while (thick[y]) {
            shape s;
            take_component(thick, h, y, comp);
            normalize(comp, h, &s);
            int g = comp_value(&s);
            if (g < 0) return g;
            v ^= g;
        }
    }
    return v;
}

/* Grundy value of a thick component (normalised), by full enumeration. */
static int comp_value(const shape *c) {
    u64 k1, k2;
    int v;
    canonical_key(c, &k1, &k2);
    if (memo_get(k1, k2, &v) && v >= 0) return v;
    if (out_of_time()) return ABORT;
    u64 seen[4] = {0, 0, 0, 0};
    shape rest = *c;
    for (int y = 0; y < c->h; y++) {
        u64 b = c->r[y];
        while (b) {
            int x = __builtin_ctzll(b);
            b &= b - 1;
            int ms = max_square(c->r, c->h, c->w, x, y, 16);
            for (int s = 1; s <= ms; s++) {
                u64 m = ((1ULL << s) - 1) << x;
                for (int i = 0; i < s; i++) rest.r[y + i] &= ~m;
                int g = set_value(rest.r, rest.h);
                for (int i = 0; i < s; i++) rest.r[y + i] |= m;
                if (g < 0) return g;
                if (g < 256) seen[g >> 6] |= 1ULL << (g & 63);
            }
        }
    }
    int mex = 0;
    while (mex < 256 && (seen[mex >> 6] >> (mex & 63) & 1)) mex++;
    memo_put(k1, k2, mex);
    return mex;
}

/* ------------------------------------------------------------------ symmetry rule */
/* 1 if some isometry maps c onto itself and no box in c meets its own image. */
static int mirror_zero(const shape *c) {
    for (int t = 1; t < 8; t++) {
        if (t >= 4 && c->h != c->w) continue;
        shape img;
        transform(c, t, &img);
        if (memcmp(img.r, c->r, sizeof(u64) * (size_t)c->h) != 0) continue;
        int ok = 1;
        for (int y = 0; y < c->h && ok; y++) {
            u64 b = c->r[y];
            while (b && ok) {
                int x = __builtin_ctzll(b);
                b &= b - 1;
                /* a box meeting its image implies a maximal one does too */
                int s = max_square(c->r, c->h, c->w, x, y, 64);
                int ax, ay, bx, by;
                map_point(t, c->h, c->w, x, y, &ax, &ay);
                map_point(t, c->h, c->w, x + s - 1, y + s - 1, &bx, &by);
                int ix = ax < bx ? ax : bx, iy = ay < by ? ay : by;
                if (abs(ix - x) < s && abs(iy - y) < s) ok = 0;
            }
        }
        if (ok) return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ top-level pieces */
typedef struct {
    int v; /* >= 0 known value, UNK unknown */
    u64 k1, k2;
} piece;

enum { MAXPIECES = 2048 };

/* Value of one thick component at the top level: memo, exact solve if small,
   symmetry rule if big (level 2), else unknown (with its key for pairing). */
static piece top_piece(const shape *c) {
    piece p;
    canonical_key(c, &p.k1, &p.k2);
    int v;
    if (memo_get(p.k1, p.k2, &v)) {
        p.v = v;
        return p;
    }
    int n = popcount_rows(c->r, c->h);
    if (n <= opt_solve_max) {
        int g = comp_value(c);
        p.v = g >= 0 ? g : UNK;
        return p;
    }
    p.v = (opt_level >= 2 && mirror_zero(c)) ? 0 : UNK;
    memo_put(p.k1, p.k2, p.v);
    return p;
}

/* Split a set of cells into pieces; returns the thin-cell parity. Each thick
   component's board-coordinate mask goes to masks (if not NULL). */
static int split_pieces(const u64 *r, int h, piece *out, int *np, u64 (*masks)[MAXD]) {
    u64 thick[MAXD], comp[MAXD];
    thick_cells(r, h, thick);
    int parity = 0;
    for (int y = 0; y < h; y++) parity ^= __builtin_popcountll(r[y] & ~thick[y]) & 1;
    for (int y = 0; y < h; y++) {
        while (thick[y]) {
            shape s;
            take_component(thick, h, y, comp);
            normalize(comp, h, &s);
            if (*np >= MAXPIECES) {
                out[MAXPIECES - 1].v = UNK;
                continue;
            }
            if (masks) memcpy(masks[*np], comp, sizeof(u64) * MAXD);
            out[(*np)++] = top_piece(&s);
        }
    }
    return parity;
}

/* XOR of all pieces, after cancelling congruent unknown pairs; UNK if some
   unknown piece has no partner. */
static int combine(const piece *ps, int n, int parity) {
    int v = parity;
    const piece *unk[MAXPIECES];
    int nu = 0;
    for (int i = 0; i < n; i++) {
        if (ps[i].v >= 0) {
            v ^= ps[i].v;
            continue;
        }
        int paired = 0;
        for (int j = 0; j < nu; j++) {
            if (unk[j] && unk[j]->k1 == ps[i].k1 && unk[j]->k2 == ps[i].k2) {
                unk[j] = NULL;
                paired = 1;
                break;
            }
        }
        if (!paired) unk[nu++] = &ps[i];
    }
    for (int j = 0; j < nu; j++)
        if (unk[j]) return UNK;
    return v;
}

/* Value of an entire position given as board rows. */
static int position_value(const u64 *r, int h) {
    static piece ps[MAXPIECES];
    int np = 0;
    int parity = split_pieces(r, h, ps, &np, NULL);
    return combine(ps, np, parity);
}

/* ------------------------------------------------------------------ arena I/O */
static char *buf;
static size_t buflen;
static int W, H;
static size_t *rowoff;

static void read_arena(void) {
    size_t cap = 4096;
    buf = malloc(cap);
    if (!buf) exit(1);
    for (;;) {
        if (buflen == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf) exit(1);
        }
        size_t got = fread(buf + buflen, 1, cap - buflen, stdin);
        if (got == 0) break;
        buflen += got;
    }
    size_t lines = 0;
    for (size_t i = 0; i < buflen; i++) lines += buf[i] == '\n';
    rowoff = malloc(sizeof(size_t) * (lines + 2));
    if (!rowoff) exit(1);
    size_t start = 0;
    W = -1;
    H = 0;
    for (size_t i = 0; i <= buflen; i++) {
        if (i == buflen || buf[i] == '\n') {
            if (i == buflen && i == start) break; /* trailing newline */
            int len = (int)(i - start);
            if (len > 0 && buf[i - 1] == '\r') len--;
            rowoff[H++] = start;
            if (W < 0 || len < W) W = len;
            start = i + 1;
        }
    }
    if (W < 0) W = 0;
}

static char cell(int x, int y) { return buf[rowoff[y] + (size_t)x]; }

static void write_arena_with(int bx, int by, int s, char mark) {
    for (int y = by; y < by + s; y++)
        for (int x = bx; x < bx + s; x++) buf[rowoff[y] + (size_t)x] = mark;
    fwrite(buf, 1, buflen, stdout);
    fflush(stdout);
}

/* ------------------------------------------------------------------ moves */
typedef struct {
    int x, y, s;
    u64 tie;
} move;

static u64 board_hash;

static u64 tie_key(int x, int y, int s) {
    if (!opt_seeded) return 0;
    return mix64(opt_seed ^ board_hash ^ ((u64)x << 40) ^ ((u64)y << 20) ^ (u64)s);
}

/* Prefer a over b: bigger box, then seeded tie-break, then scan order. */
static int better(const move *a, const move *b) {
    if (a->s != b->s) return a->s > b->s;
    return a->tie > b->tie;
}

/* Fallback for any arena size: the biggest box (first in scan order). */
static void biggest_box_any(char mark) {
    int *ms = calloc((size_t)(W + 1) * (size_t)(H + 1), sizeof(int));
    if (!ms) exit(1);
    move best = {0, 0, 0, 0};
    for (int y = H - 1; y >= 0; y--)
        for (int x = W - 1; x >= 0; x--) {
            if (cell(x, y) != '-') continue;
            int a = ms[(y + 1) * (W + 1) + x], b = ms[y * (W + 1) + x + 1], c = ms[(y + 1) * (W + 1) + x + 1];
            int m = a < b ? a : b;
            m = m < c ? m : c;
            ms[y * (W + 1) + x] = m + 1;
        }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int s = ms[y * (W + 1) + x];
            if (s > 16) s = 16;
            move m = {x, y, s, tie_key(x, y, s)};
            if (s > 0 && (best.s == 0 || better(&m, &best))) best = m;
        }
    if (best.s == 0) {
        fwrite(buf, 1, buflen, stdout);
        return;
    }
    write_arena_with(best.x, best.y, best.s, mark);
}

static u64 V[MAXD]; /* vacant cells */
static move *cands;
static int ncands;

static void gen_moves(void) {
    cands = malloc(sizeof(move) * (size_t)(W * H * 16 + 1));
    if (!cands) exit(1);
    static int ms[MAXD][MAXD];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) ms[y][x] = (V[y] >> x & 1) ? max_square(V, H, W, x, y, 16) : 0;
    /* biggest first, so a scan can stop at the first size class that wins */
    for (int s = 16; s >= 1; s--)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                if (ms[y][x] >= s) {
                    move m = {x, y, s, tie_key(x, y, s)};
                    cands[ncands++] = m;
                }
}

static void apply(u64 *r, const move *m, int on) {
    u64 mask = ((1ULL << m->s) - 1) << m->x;
    for (int i = 0; i < m->s; i++) {
        if (on) r[m->y + i] |= mask;
        else r[m->y + i] &= ~mask;
    }
}

/* Value of the position after m (the opponent to move). */
static int value_after(const move *m) {
    apply(V, m, 0);
    int v = position_value(V, H);
    apply(V, m, 1);
    return v;
}

/* Winning replies the opponent would have after m (capped). */
static int winning_replies(const move *m, int cap) {
    apply(V, m, 0);
    int count = 0;
    for (int y = 0; y < H && count < cap && !timed_out; y++)
        for (int x = 0; x < W && count < cap; x++) {
            if (!(V[y] >> x & 1)) continue;
            int ms = max_square(V, H, W, x, y, 16);
            for (int s = 1; s <= ms && count < cap; s++) {
                move r = {x, y, s, 0};
                if (value_after(&r) == 0) count++;
                if (out_of_time()) break;
            }
        }
    apply(V, m, 1);
    return count;
}

static int is_single_square(const u64 *r, int h, int *sx, int *sy, int *ss) {
    shape s;
    normalize(r, h, &s);
    if (s.h == 0 || s.h != s.w || s.h > 16) return 0;
    u64 full = (s.w >= 64 ? ~0ULL : (1ULL << s.w) - 1);
    for (int y = 0; y < s.h; y++)
        if (s.r[y] != full) return 0;
    for (int y = 0; y < h; y++)
        if (r[y]) {
            *sy = y;
            int lo = 64;
            for (int yy = y; yy < y + s.h; yy++)
                if (__builtin_ctzll(r[yy]) < lo) lo = __builtin_ctzll(r[yy]);
            *sx = lo;
            break;
        }
    *ss = s.h;
    return 1;
}

static move choose_multiplayer(void) {
    int sx, sy, ss;
    if (is_single_square(V, H, &sx, &sy, &ss)) {
        move m = {sx, sy, ss, 0};
        return m;
    }
    for (int i = 0; i < ncands; i++) {
        apply(V, &cands[i], 0);
        int bad = is_single_square(V, H, &sx, &sy, &ss);
        apply(V, &cands[i], 1);
        if (!bad) return cands[i];
    }
    return cands[0];
}

/* On a symmetric arena the winning first move is usually a box that the
   symmetry maps onto itself (then mirror); try those before the full scan,
   which may run out of time on big arenas. */
static int symmetric_zero_move(move *out) {
    shape v, img;
    normalize(V, H, &v);
    int y0 = 0, x0 = 64;
    while (!V[y0]) y0++;
    for (int y = 0; y < H; y++)
        if (V[y] && __builtin_ctzll(V[y]) < x0) x0 = __builtin_ctzll(V[y]);
    int found = 0;
    for (int t = 1; t < 8; t++) {
        if (t >= 4 && v.h != v.w) continue;
        transform(&v, t, &img);
        if (memcmp(img.r, v.r, sizeof(u64) * (size_t)v.h) != 0) continue;
        for (int i = 0; i < ncands; i++) {
            const move *m = &cands[i];
            if (found && m->s < out->s) break;
            int x = m->x - x0, y = m->y - y0, ax, ay, bx, by;
            map_point(t, v.h, v.w, x, y, &ax, &ay);
            map_point(t, v.h, v.w, x + m->s - 1, y + m->s - 1, &bx, &by);
            if ((ax < bx ? ax : bx) != x || (ay < by ? ay : by) != y) continue;
            if (value_after(m) == 0 && (!found || better(m, out))) {
                *out = *m;
                found = 1;
            }
            if (timed_out) return found;
        }
    }
    return found;
}

static move choose_two_player(void) {
    int cur = position_value(V, H);
    if (opt_level < 2 && cur == UNK) return cands[0];
    move sym;
    if (opt_level >= 2 && cur == UNK && symmetric_zero_move(&sym)) return sym;

    /* Scan every move, biggest first: the first size class holding a move to
       a zero position wins; remember the best unknown and known-lost moves. */
    int have_zero = 0, have_unk = 0;
    move zero = cands[0], unk = cands[0];
    for (int i = 0; i < ncands; i++) {
        const move *m = &cands[i];
        if (have_zero && m->s < zero.s) break;
        if (out_of_time()) break;
        int v = value_after(m);
        if (v == 0) {
            if (!have_zero || better(m, &zero)) zero = *m;
            have_zero = 1;
        } else if (v == UNK && !timed_out) {
            if (!have_unk || better(m, &unk)) unk = *m;
            have_unk = 1;
        }
    }
    if (have_zero) return zero;
    if (cur == UNK || have_unk) return have_unk ? unk : cands[0];

    /* Known lost: leave the opponent as few winning replies as we can. */
    move best = cands[ncands - 1];
    int fewest = 1 << 30;
    for (int i = 0; i < ncands && !timed_out; i++) {
        int w = winning_replies(&cands[i], fewest);
        if (timed_out) break;
        if (w < fewest || (w == fewest && better(&cands[i], &best))) {
            fewest = w;
            best = cands[i];
        }
    }
    return best;
}

static void usage(void) {
    fprintf(stderr, "usage: a.out MARK [--level 1|2] [--budget-ms N] [--solve-max N] [--seed N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    t_start = now();
    if (argc < 2) usage();
    char mark = argv[1][0];
    for (int i = 2; i < argc; i++) {
        if (i + 1 >= argc) usage();
        if (!strcmp(argv[i], "--level")) opt_level = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget-ms")) opt_budget_s = atof(argv[++i]) / 1000.0;
        else if (!strcmp(argv[i], "--solve-max")) opt_solve_max = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed")) {
            opt_seeded = 1;
            opt_seed = mix64(strtoull(argv[++i], NULL, 10));
        } else usage();
    }
    read_arena();

    int vacant = 0;
    char others[256] = {0};
    int nothers = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            char c = cell(x, y);
            board_hash = mix64(board_hash ^ (u64)(unsigned char)c);
            if (c == '-') vacant++;
            else if (c != 'o' && c != mark && !others[(unsigned char)c]) {
                others[(unsigned char)c] = 1;
                nothers++;
            }
        }
    if (vacant == 0) { /* game over: echo */
        fwrite(buf, 1, buflen, stdout);
        return 0;
    }
    if (W > MAXD || H > MAXD) {
        biggest_box_any(mark);
        return 0;
    }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (cell(x, y) == '-') V[y] |= 1ULL << x;

    memo = calloc((size_t)1 << MEMO_BITS, sizeof(memo_ent));
    if (!memo) exit(1);
    gen_moves();
    move m = nothers >= 2 ? choose_multiplayer() : choose_two_player();
    write_arena_with(m.x, m.y, m.s, mark);
    return 0;
}
