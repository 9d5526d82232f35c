/* Test entry for tests/integration: a seeded random m,n,k player (see entry.yaml). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    long seed = 0;
    double sleep_s = 0;
    const char *control = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seed")) seed = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--sleep")) sleep_s = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--control")) control = argv[i + 1];
    }
    int w, h, k;
    if (scanf("%d %d %d", &w, &h, &k) != 3 || w < 1 || h < 1 || w * h > 4096) return 2;
    static char taken[4096];
    int x, y, n = 0;
    while (scanf("%d %d", &x, &y) == 2) {
        if (x >= 1 && x <= w && y >= 1 && y <= h) taken[(y - 1) * w + (x - 1)] = 1;
        n++;
    }
    int empty = w * h - n;
    if (empty <= 0) return 3;
    /* deterministic: depends on the seed and the position only */
    unsigned long long r = (unsigned long long)(seed * 7919 + n) * 6364136223846793005ULL + 1442695040888963407ULL;
    r ^= r >> 33;
    int pick = (int)(r % (unsigned long long)empty), cell = 0;
    for (cell = 0; cell < w * h; cell++) {
        if (!taken[cell] && pick-- == 0) break;
    }
    if (sleep_s > 0) {
        struct timespec ts = {(time_t)sleep_s, (long)((sleep_s - (time_t)sleep_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    if (control) {
        FILE *f = fopen(control, "r");
        char buf[16] = {0};
        if (f) {
            /* "forfeit": every player forfeits; "forfeit N": only the one with --seed N */
            int got = fgets(buf, sizeof buf, f) != NULL;
            fclose(f);
            if (got && !strncmp(buf, "forfeit", 7) && (buf[7] != ' ' || atol(buf + 8) == seed)) {
                printf("0 0\n");
                return 0;
            }
            /* "hang": the one move that claims the file (renames it to CONTROL.taken) takes
               10 minutes, as on a machine that stalls; every other move is as usual */
            char claimed[4096];
            if (got && !strncmp(buf, "hang", 4) &&
                snprintf(claimed, sizeof claimed, "%s.taken", control) < (int)sizeof claimed &&
                rename(control, claimed) == 0) {
                struct timespec stall = {600, 0};
                nanosleep(&stall, NULL);
            }
        }
    }
    printf("%d %d\n", cell % w + 1, cell / w + 1);
    return 0;
}
