/*
 * Start one sandbox: none entry program as the entry user (workers/sandbox/plain_user.py):
 *
 *     entry_user UID GID RLIMIT=SOFT:HARD ... -- PROGRAM ARGS...
 *
 * RLIMIT is the resource's number (RLIMIT_CPU = 0, ...), SOFT and HARD decimal or
 * "unlimited". Sets the limits, drops every group and becomes UID/GID, then execs
 * PROGRAM (searched in PATH). A failed exec exits 126 (127: no such program) with
 * the reason on stderr, as a shell does.
 *
 * Why a program of its own: the worker (root) would otherwise start the entry with
 * Popen(user=...), which gives up Python's vfork for a fork, and set its limits
 * through prlimit(1), one more dynamically linked exec: 6-8 ms a move more on the
 * 2-core machine, where this costs about one exec of a small binary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static rlim_t value(const char *text, char **end) {
    if (!strncmp(text, "unlimited", 9)) {
        *end = (char *)text + 9;
        return RLIM_INFINITY;
    }
    return (rlim_t)strtoull(text, end, 10);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: entry_user UID GID [RLIMIT=SOFT:HARD]... -- PROGRAM [ARGS]...\n");
        return 126;
    }
    uid_t uid = (uid_t)strtoul(argv[1], NULL, 10);
    gid_t gid = (gid_t)strtoul(argv[2], NULL, 10);
    int i = 3;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        char *end;
        int resource = (int)strtol(argv[i], &end, 10);
        if (*end != '=') goto bad;
        struct rlimit r;
        r.rlim_cur = value(end + 1, &end);
        if (*end != ':') goto bad;
        r.rlim_max = value(end + 1, &end);
        if (*end || setrlimit(resource, &r) < 0) goto bad;
        continue;
    bad:
        fprintf(stderr, "entry_user: cannot set limit %s: %s\n", argv[i], strerror(errno));
        return 126;
    }
    if (i + 1 >= argc) return 126;
    if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0) {
        fprintf(stderr, "entry_user: cannot become uid %u: %s\n", (unsigned)uid, strerror(errno));
        return 126;
    }
    execvp(argv[i + 1], argv + i + 1);
    int e = errno;
    fprintf(stderr, "cannot start %s: %s\n", argv[i + 1], strerror(e));
    return e == ENOENT ? 127 : 126;
}
