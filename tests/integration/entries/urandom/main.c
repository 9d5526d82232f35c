/* Test entry for tests/integration: a random m,n,k player driven by /dev/urandom (see entry.yaml). */
#include <stdio.h>

int main(void) {
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
    unsigned int r = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&r, sizeof r, 1, f) != 1) return 4;
    fclose(f);
    int pick = (int)(r % (unsigned int)empty), cell = 0;
    for (cell = 0; cell < w * h; cell++) {
        if (!taken[cell] && pick-- == 0) break;
    }
    printf("%d %d\n", cell % w + 1, cell / w + 1);
    return 0;
}
