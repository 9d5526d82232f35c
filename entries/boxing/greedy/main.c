/* greedy -- a Boxing player (POTM, January 1994): the biggest box, with a
 * parity rule of thumb.
 *
 * Usage:  a.out MARK [--seed N] [--max-size S]
 *         stdin: the arena, stdout: the arena plus one new square box of MARK.
 *
 * Rule of thumb: if only 1x1 boxes were played from now on, whoever leaves
 * an even number of vacant cells makes the last move. A box of side s takes
 * s*s cells, which has the parity of s, so greedy takes the biggest box whose
 * side has the parity of the vacant count (a side one smaller than fits, if
 * needed), and the plain biggest box only when no such side exists.
 *
 * Among equally good boxes it takes the first in reading order (top-left
 * corner, row by row), or with --seed N one picked by a hash of N and the
 * arena, so seeded copies break ties differently but each plays the same
 * move again on the same arena (reruns stay reproducible). --max-size caps
 * the box side (1..16), which makes a patient, small-box player.
 * Any arena size works; rows are the lines of stdin.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: a.out MARK [--seed N] [--max-size S]\n");
        return 2;
    }
    char mark = argv[1][0];
    int seeded = 0, cap = 16;
    uint64_t seed = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seed")) {
            seeded = 1;
            seed = mix64(strtoull(argv[i + 1], NULL, 10));
        } else if (!strcmp(argv[i], "--max-size")) {
            cap = atoi(argv[i + 1]);
            if (cap < 1) cap = 1;
            if (cap > 16) cap = 16;
        } else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }

    size_t len = 0, bufcap = 4096;
    char *buf = malloc(bufcap);
    if (!buf) return 1;
    for (;;) {
        if (len == bufcap) {
            bufcap *= 2;
            if (!(buf = realloc(buf, bufcap))) return 1;
        }
        size_t got = fread(buf + len, 1, bufcap - len, stdin);
        if (!got) break;
        len += got;
    }
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += buf[i] == '\n';
    size_t *off = malloc(sizeof(size_t) * lines);
    if (!off) return 1;
    int W = -1, H = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || buf[i] == '\n') {
            if (i == len && i == start) break;
            int l = (int)(i - start);
            if (l > 0 && buf[i - 1] == '\r') l--;
            off[H++] = start;
            if (W < 0 || l < W) W = l;
            start = i + 1;
        }
    }
    if (W < 0) W = 0;

    /* ms[y][x]: side of the biggest vacant square with top-left (x,y) */
    int *ms = calloc((size_t)(W + 1) * (size_t)(H + 1), sizeof(int));
    if (!ms) return 1;
    uint64_t bh = 0;
    for (size_t i = 0; i < len; i++) bh = mix64(bh ^ (unsigned char)buf[i]);
    int bx = -1, by = -1, bs = 0, bgood = 0;
    uint64_t btie = 0;
    long vacant = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) vacant += buf[off[y] + (size_t)x] == '-';
    for (int y = H - 1; y >= 0; y--)
        for (int x = W - 1; x >= 0; x--) {
            if (buf[off[y] + (size_t)x] != '-') continue;
            int a = ms[(y + 1) * (W + 1) + x], b = ms[y * (W + 1) + x + 1], c = ms[(y + 1) * (W + 1) + x + 1];
            int m = a < b ? a : b;
            ms[y * (W + 1) + x] = (m < c ? m : c) + 1;
        }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int s = ms[y * (W + 1) + x];
            if (s > cap) s = cap;
            if (s == 0) continue;
            /* prefer a side with the parity of the vacant count (or one less) */
            int t = (s & 1) == (vacant & 1) ? s : s - 1;
            int good = t > 0;
            if (!good) t = s;
            uint64_t tie = seeded ? mix64(seed ^ bh ^ ((uint64_t)x << 32) ^ (uint64_t)y) : 0;
            if (good > bgood || (good == bgood && (t > bs || (t == bs && tie > btie)))) {
                bx = x;
                by = y;
                bs = t;
                bgood = good;
                btie = tie;
            }
        }
    for (int y = by; y < by + bs; y++)
        for (int x = bx; x < bx + bs; x++) buf[off[y] + (size_t)x] = mark;
    fwrite(buf, 1, len, stdout); /* unchanged when nothing is vacant */
    return 0;
}
