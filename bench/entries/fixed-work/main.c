/* A CPU-bound mnk entry for the fair timing benchmark (bench/fairtime_bench.py):
 * every move does the same fixed amount of work (argv[1] million steps of a
 * xorshift generator, which the compiler cannot skip: the result picks nothing
 * but is written to a volatile), then plays the first empty cell, column by
 * column. Its move time is then a measure of how much CPU it got. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long long sink;

int main(int argc, char **argv) {
    long steps = (argc > 1 ? atol(argv[1]) : 20) * 1000000L;
    unsigned long long x = 88172645463325252ULL;
    for (long i = 0; i < steps; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    sink = x;

    int w, h, k;
    if (scanf("%d %d %d", &w, &h, &k) != 3 || w < 1 || h < 1 || w > 64 || h > 64) return 1;
    static char taken[65][65];
    int a, b;
    while (scanf("%d %d", &a, &b) == 2)
        if (a >= 1 && a <= w && b >= 1 && b <= h) taken[a][b] = 1;
    for (int col = 1; col <= w; col++)
        for (int row = 1; row <= h; row++)
            if (!taken[col][row]) {
                printf("%d %d\n", col, row);
                return 0;
            }
    return 1;
}
