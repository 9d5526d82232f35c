/*
 * The sandbox launcher: PID 1 of one entry's bubblewrap sandbox (docs/sandbox.md).
 *
 * workers/sandbox/bwrap.py starts one sandbox per entry per game with this
 * program as its only process, then sends it requests over a unix socket
 * (fd given as argv[1]): "put this file into the working copy", "run this
 * argv with this stdin under these limits", "start this persistent process",
 * "kill everything". Namespace setup is paid once per game; a move costs one
 * fork+exec here, which is cheaper than Python's subprocess.run of the same
 * program outside.
 *
 * Why PID 1: each game is served by a game's init (manage_games below), PID 1
 * of that game's own PID namespace. Orphans are reparented to it, so "a
 * descendant outlived the move" is simply "it still has a child after the
 * move's process exited", kill(-1, SIGKILL) reaches every process of the game
 * and nothing else, and no process inside can signal it (the kernel drops
 * signals to a namespace's init that it has no handler for). PR_SET_DUMPABLE 0
 * keeps the entry (same uid) from ptracing it or reading its fds through /proc.
 *
 * Wire format (native byte order; mirrored by workers/sandbox/launcher.py):
 * every message is a header {u32 op, u32 len} and len bytes of payload.
 * SPAWN carries two fds (the persistent process's stdin and stdout) as
 * SCM_RIGHTS on its header.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sched.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "entry_filter.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* requests */
enum { OP_PUT = 1, OP_SYNC = 2, OP_RUN = 3, OP_SPAWN = 4, OP_ABORT = 5, OP_KILL = 6, OP_QUIT = 7, OP_RESET = 8 };
/* replies */
enum { REPLY_OK = 1, REPLY_RESULT = 2, REPLY_SPAWNED = 3 };
/* PUT kinds */
enum { PUT_DIR = 0, PUT_FILE = 1, PUT_APPEND = 2, PUT_SYMLINK = 3 };
/* RESULT flags */
enum {
    F_EXITED = 1,       /* the top process exited (exit_code valid) */
    F_SIGNALED = 2,     /* the top process died of a signal (signo valid) */
    F_TIMEOUT = 4,      /* wall-clock deadline passed: everything killed */
    F_STDOUT_OVER = 8,  /* stdout went over its cap: everything killed */
    F_LEFT = 16,        /* descendants alive after the top process exited: killed */
    F_ABORTED = 32,     /* the host asked us to stop it (abort_reason) */
    F_KILLED = 64,      /* we killed the top process ourselves */
};

#define MAX_MSG (64u << 20)
/* a process that has begun to exit (task flag PF_EXITING in /proc/PID/stat) */
#define PF_EXITING_FLAG 0x00000004ul
/* descendants remembered as exiting during one grace (more are simply looked at again) */
#define MAX_REMEMBERED 256
/* after a kill, how long the answer may wait for the killed to be reaped */
#define REAP_BUDGET_NS (20 * 1000000ull)

struct __attribute__((packed)) run_req {
    uint32_t wall_ms;                 /* 0: no deadline (persistent processes) */
    uint32_t cpu_soft_s, cpu_hard_s;  /* 0: no limit */
    uint64_t as_bytes, fsize_bytes;   /* 0: no limit */
    uint32_t nofile, nproc;           /* 0: no limit */
    uint32_t stdout_cap, stderr_keep;
    uint32_t argc, stdin_len;
    uint32_t exit_grace_ms;           /* how long descendants may take to go, on the move's clock */
};

struct __attribute__((packed)) result {
    uint32_t flags;
    int32_t exit_code, signo;
    uint32_t abort_reason;
    uint64_t wall_us, cpu_us, maxrss_kb;
    uint32_t left_count;
    char left_comm[16];
    uint32_t stdout_len, stderr_len;
};

struct msg {
    uint32_t op, len;
    char *data;
    int fds[2];
    int nfds;
};

static int ctl = -1;
/*
 * The sandbox cgroup's "entry" child, opened by the host (cgroup.procs, -1:
 * none). A persistent process writes itself there before exec, so the host
 * can freeze it and its descendants between turns while the launcher, left
 * outside, keeps answering.
 */
static int entry_cgroup = -1;
static const char *entry_root = "/entry";
static int put_errno = 0;
static char put_path[256];

static void die(const char *what) {
    /* our stderr is bwrap's, which the host reads when we vanish */
    fprintf(stderr, "tourney launcher: %s: %s\n", what, strerror(errno));
    kill(-1, SIGKILL);
    _exit(111);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int read_full(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void send_msg(uint32_t op, const void *a, uint32_t alen, const void *b, uint32_t blen,
                     const void *c, uint32_t clen) {
    uint32_t hdr[2] = {op, alen + blen + clen};
    struct iovec iov[4] = {{hdr, sizeof hdr}, {(void *)a, alen}, {(void *)b, blen}, {(void *)c, clen}};
    size_t total = sizeof hdr + (size_t)alen + blen + clen;
    struct iovec *v = iov;
    int cnt = 4;
    while (total > 0) {
        ssize_t w = writev(ctl, v, cnt);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("write to host");
        total -= (size_t)w;
        while (cnt > 0 && (size_t)w >= v->iov_len) {
            w -= (ssize_t)v->iov_len;
            v++;
            cnt--;
        }
        if (cnt > 0) {
            v->iov_base = (char *)v->iov_base + w;
            v->iov_len -= (size_t)w;
        }
    }
}

/* One message from the host; 0 at EOF (the host is gone). */
static int read_msg(struct msg *m) {
    uint32_t hdr[2];
    char cbuf[CMSG_SPACE(2 * sizeof(int))];
    struct iovec iov = {hdr, sizeof hdr};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    ssize_t r;
    do r = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r <= 0) return 0;
    m->nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int i = 0; i < n; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (m->nfds < 2) m->fds[m->nfds++] = fd;
                else close(fd);
            }
        }
    }
    if ((size_t)r < sizeof hdr && read_full(ctl, (char *)hdr + r, sizeof hdr - (size_t)r) < 0) return 0;
    m->op = hdr[0];
    m->len = hdr[1];
    if (m->len > MAX_MSG) {
        errno = EMSGSIZE;
        die("message from host");
    }
    m->data = malloc(m->len + 1);
    if (!m->data) die("malloc");
    if (m->len && read_full(ctl, m->data, m->len) < 0) return 0;
    m->data[m->len] = 0;
    return 1;
}

/* ---- the working copy --------------------------------------------------- */

static int safe_relpath(const char *p) {
    if (!*p || p[0] == '/') return 0;
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 2 && s[0] == '.' && s[1] == '.')) return 0;
        s += n + (e ? 1 : 0);
    }
    return 1;
}

/* PUT payload: u32 kind, u32 mode, u32 path_len, path, data */
static void do_put(const struct msg *m) {
    uint32_t head[3];
    if (put_errno) return; /* report the first failure at SYNC */
    if (m->len < sizeof head) { put_errno = EINVAL; return; }
    memcpy(head, m->data, sizeof head);
    uint32_t kind = head[0], mode = head[1], plen = head[2];
    if (plen >= 4096 || sizeof head + plen > m->len) { put_errno = EINVAL; return; }
    char rel[4096];
    memcpy(rel, m->data + sizeof head, plen);
    rel[plen] = 0;
    const char *data = m->data + sizeof head + plen;
    size_t dlen = m->len - sizeof head - plen;
    snprintf(put_path, sizeof put_path, "%.200s", rel); /* for the error message */
    if (!safe_relpath(rel)) { put_errno = EINVAL; return; }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", entry_root, rel);
    if (kind == PUT_DIR) {
        if (mkdir(path, (mode_t)(mode & 07777)) < 0 && errno != EEXIST) put_errno = errno;
        return;
    }
    if (kind == PUT_SYMLINK) {
        char target[4096];
        if (dlen >= sizeof target) { put_errno = ENAMETOOLONG; return; }
        memcpy(target, data, dlen);
        target[dlen] = 0;
        if (symlink(target, path) < 0) put_errno = errno;
        return;
    }
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (kind == PUT_APPEND ? O_APPEND : O_TRUNC);
    int fd = open(path, flags, (mode_t)(mode & 07777));
    if (fd < 0) { put_errno = errno; return; }
    for (size_t off = 0; off < dlen;) {
        ssize_t w = write(fd, data + off, dlen - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { put_errno = w < 0 ? errno : ENOSPC; break; }
        off += (size_t)w;
    }
    close(fd);
}

static void do_sync(void) {
    char text[512];
    uint32_t err = (uint32_t)put_errno;
    int n = 0;
    if (put_errno) n = snprintf(text, sizeof text, "%s: %s", put_path, strerror(put_errno));
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof text) n = sizeof text - 1;
    put_errno = 0;
    send_msg(REPLY_OK, &err, sizeof err, text, (uint32_t)n, NULL, 0);
}


/* ---- reset: the sandbox as fresh for the entry's next game -------------- */

/*
 * OP_RESET (workers/sandbox/pool.py reuses a sandbox for the same entry's next
 * game): the game's init kills every process of its game. No entry can make
 * or reach a kernel key (entry_filter.h refuses keyctl, add_key, request_key),
 * and a KEYCTL_CLEAR here would itself create the uid's keyrings, which every
 * sandbox's /proc/keys then lists, so keyrings are left alone. Everything a game
 * can leave is not emptied but dropped with the game's init: its PID and IPC
 * namespaces (the PID counter, SysV objects and POSIX message queues), its
 * network namespace unless it shows no trace of the game (loopback counters,
 * sockets, TIME_WAIT ports: net_untouched), and in its mount namespace its own
 * /entry, /tmp and /dev/shm (a fresh tmpfs also numbers inodes afresh). The
 * next game runs in fresh ones (start_game, game_init). A game's init that
 * fails ends without telling the manager it is done, so the manager, and
 * with it the sandbox, ends: the host never reuses a sandbox whose reset
 * failed.
 */
static void do_reset(void) {
    /* nothing to clear in the shared kernel state: see above */
}

/* ---- processes ------------------------------------------------------------ */

struct session {
    pid_t top;
    int top_reaped;
    int status;
    uint64_t cpu_us, maxrss_kb;
};

static void account(struct session *s, pid_t pid, int status, const struct rusage *ru) {
    s->cpu_us += (uint64_t)ru->ru_utime.tv_sec * 1000000u + (uint64_t)ru->ru_utime.tv_usec +
                 (uint64_t)ru->ru_stime.tv_sec * 1000000u + (uint64_t)ru->ru_stime.tv_usec;
    if ((uint64_t)ru->ru_maxrss > s->maxrss_kb) s->maxrss_kb = (uint64_t)ru->ru_maxrss;
    if (pid == s->top) {
        s->top_reaped = 1;
        s->status = status;
    }
}

/* Kill every process in the sandbox but us and reap them all. */
static void kill_all(struct session *s) {
    for (;;) {
        /* again before each wait: a process forked while we were reaping dies too */
        kill(-1, SIGKILL);
        int st;
        struct rusage ru;
        pid_t p = wait4(-1, &st, __WALL, &ru);
        if (p < 0) {
            if (errno == EINTR) continue;
            return; /* ECHILD: nobody left */
        }
        if (s) account(s, p, st, &ru);
    }
}

/*
 * kill_all, but reap for at most budget_ns; 0 if some are still dying then.
 * A process with SIGKILL pending runs no more of its own code, so the answer
 * need not wait for a loaded machine to schedule every one of them through
 * exit; the rest are reaped before the next request (dying).
 */
static int dying = 0;

static int kill_all_for(struct session *s, uint64_t budget_ns) {
    uint64_t end = now_ns() + budget_ns;
    for (;;) {
        kill(-1, SIGKILL);
        int st;
        struct rusage ru;
        pid_t p = wait4(-1, &st, WNOHANG | __WALL, &ru);
        if (p > 0) {
            account(s, p, st, &ru);
            continue;
        }
        if (p < 0 && errno == EINTR) continue;
        if (p < 0) return 1; /* ECHILD: nobody left */
        if (now_ns() >= end) return 0;
        struct timespec nap = {0, 200000L};
        nanosleep(&nap, NULL);
    }
}

/* Reap what has exited; 1 if some child is still alive. */
static int reap_exited(struct session *s) {
    for (;;) {
        int st;
        struct rusage ru;
        pid_t p = wait4(-1, &st, WNOHANG | __WALL, &ru);
        if (p > 0) {
            account(s, p, st, &ru);
            continue;
        }
        if (p < 0 && errno == EINTR) continue;
        return p == 0;
    }
}

/*
 * Whether a process is in the kernel's exit path: a zombie or dead, or with
 * PF_EXITING set (exit_signals(), first thing in do_exit, also for every
 * thread of a group killed by a fatal signal). Such a process runs none of its
 * own code any more, so when it is gone depends only on when the machine
 * schedules it: it never counts as left behind (docs/config.md). A pending
 * signal proves nothing: a process can block the one it was sent, or raise it
 * itself, and go on computing.
 */
static int is_exiting(long pid) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1; /* gone while we looked */
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0) return 1;
    buf[r] = 0;
    /* "pid (comm) S ppid pgrp session tty tpgid flags ...": comm may hold ')' itself */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2]) return 0;
    char state = p[2];
    if (state == 'Z' || state == 'X' || state == 'x') return 1;
    unsigned long flags = 0;
    return sscanf(p + 3, " %*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & PF_EXITING_FLAG);
}

/*
 * How many processes besides us are alive and not exiting (0: every one left
 * is on its way out), and the name of one of them. `seen` remembers those
 * already seen exiting during one grace (once exiting, always), so a grace
 * reads each dying process once.
 */
static uint32_t count_alive(char comm[16], long *seen, int *nseen) {
    uint32_t n = 0;
    DIR *d = opendir("/proc");
    if (!d) return 1;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1) continue;
        int known = 0;
        for (int i = 0; i < *nseen && !known; i++) known = seen[i] == pid;
        if (known) continue;
        if (is_exiting(pid)) {
            if (*nseen < MAX_REMEMBERED) seen[(*nseen)++] = pid;
            continue;
        }
        if (n++ == 0 && comm) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%ld/comm", pid);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                ssize_t r = read(fd, comm, 15);
                close(fd);
                if (r > 0) {
                    comm[r] = 0;
                    char *nl = strchr(comm, '\n');
                    if (nl) *nl = 0;
                }
            }
        }
    }
    closedir(d);
    return n;
}

static void set_limit(int resource, uint64_t soft, uint64_t hard) {
    struct rlimit cur, lim;
    if (getrlimit(resource, &cur) < 0) return;
    lim.rlim_cur = (rlim_t)soft;
    lim.rlim_max = (rlim_t)hard;
    /* we cannot raise a hard limit; clamp instead of failing the move */
    if (cur.rlim_max != RLIM_INFINITY && lim.rlim_max > cur.rlim_max) lim.rlim_max = cur.rlim_max;
    if (lim.rlim_cur > lim.rlim_max) lim.rlim_cur = lim.rlim_max;
    setrlimit(resource, &lim);
}

static void child_fail(const char *prog) {
    /* no stdio here: the child shares our memory until it execs or exits */
    const char *why = strerror(errno);
    struct iovec v[4] = {{(void *)"cannot execute ", 15}, {(void *)prog, strlen(prog)},
                         {(void *)": ", 2}, {(void *)why, strlen(why)}};
    ssize_t ignored = writev(2, v, 4);
    (void)ignored;
    ignored = write(2, "\n", 1);
    _exit(127);
}

/*
 * vfork: the child borrows our memory until it execs, so a move costs no
 * page-table copy and no copy-on-write faults afterwards (it is a good share
 * of a native move). The child only makes system calls before execvp.
 */
static pid_t start_child(const struct run_req *rq, char **argv, int in_fd, int out_fd, int err_fd,
                         int cgroup_fd) {
    pid_t pid = vfork();
    if (pid != 0) return pid;
    /* "0": the writer itself; descendants forked from here on inherit it */
    if (cgroup_fd >= 0 && write(cgroup_fd, "0", 1) != 1) _exit(125);
    /* the child: plain signal state, its stdio, its limits, then the program */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    /*
     * Its own session, so its own scheduler autogroup (where the kernel has
     * them): the move's processes, however many, share one group's CPU with
     * the rest of the machine, and the launcher, alone in its group, wakes on
     * time at the deadline even under a fork bomb (measured: 120-170 ms late
     * sharing a group with one, 1-3 ms alone).
     */
    setsid();
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(126);
    if (rq->cpu_soft_s) set_limit(RLIMIT_CPU, rq->cpu_soft_s, rq->cpu_hard_s);
    if (rq->as_bytes) set_limit(RLIMIT_AS, rq->as_bytes, rq->as_bytes);
    if (rq->fsize_bytes) set_limit(RLIMIT_FSIZE, rq->fsize_bytes, rq->fsize_bytes);
    if (rq->nofile) set_limit(RLIMIT_NOFILE, rq->nofile, rq->nofile);
    if (rq->nproc) set_limit(RLIMIT_NPROC, rq->nproc, rq->nproc);
    set_limit(RLIMIT_CORE, 0, 0);
    /* no POSIX message queue: nothing in a game needs one (and each game's IPC
       namespace is its own: none would outlive it anyway) */
    set_limit(RLIMIT_MSGQUEUE, 0, 0);
    umask(022);
    /* the seccomp filter is already on: the game's init installed it (game_init) */
    execvp(argv[0], argv);
    child_fail(argv[0]);
    return -1;
}

static void nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

struct buf {
    char *p;
    size_t len, cap;
};

static void buf_add(struct buf *b, const char *d, size_t n) {
    if (b->len + n > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->len + n) c *= 2;
        char *q = realloc(b->p, c);
        if (!q) die("realloc");
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
}

/* Read what is there into b; keep only the last `keep` bytes when keep > 0.
   Returns -1 at EOF, else the number of bytes read. */
static ssize_t pump(int fd, struct buf *b, size_t keep) {
    char chunk[65536];
    ssize_t r;
    do r = read(fd, chunk, sizeof chunk);
    while (r < 0 && errno == EINTR);
    if (r == 0 || (r < 0 && errno != EAGAIN)) return -1;
    if (r < 0) return 0;
    buf_add(b, chunk, (size_t)r);
    if (keep && b->len > 2 * keep) {
        memmove(b->p, b->p + b->len - keep, keep);
        b->len = keep;
    }
    return r;
}

/*
 * One RUN (stdin given, stdout captured, deadline) or one SPAWN (stdio are
 * the host's fds, no deadline: the host times its reads). Ends with one
 * REPLY_RESULT; a KILL that ended a SPAWN is answered with REPLY_OK after it.
 */
static void session(struct msg *m, int spawn) {
    struct run_req rq;
    struct result res;
    struct session s = {0};
    memset(&res, 0, sizeof res);
    if (m->len < sizeof rq) { errno = EINVAL; die("short request"); }
    memcpy(&rq, m->data, sizeof rq);
    /* argv: argc NUL-terminated strings, then the stdin bytes */
    char **argv = calloc(rq.argc + 1, sizeof *argv);
    if (!argv || rq.argc == 0) { errno = EINVAL; die("bad argv"); }
    char *p = m->data + sizeof rq, *end = m->data + m->len;
    for (uint32_t i = 0; i < rq.argc; i++) {
        char *z = memchr(p, 0, (size_t)(end - p));
        if (!z) { errno = EINVAL; die("bad argv"); }
        argv[i] = p;
        p = z + 1;
    }
    if ((size_t)(end - p) < rq.stdin_len) { errno = EINVAL; die("bad stdin"); }
    const char *in_data = p;
    size_t in_left = rq.stdin_len;

    int inp[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2];
    if (pipe2(errp, O_CLOEXEC) < 0) die("pipe");
    if (spawn) {
        if (m->nfds != 2) { errno = EINVAL; die("spawn without stdio"); }
        inp[0] = m->fds[0];
        outp[1] = m->fds[1];
        m->nfds = 0; /* ours now: closed below once the child has them */
    } else if (pipe2(inp, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0) {
        die("pipe");
    }
    uint64_t t0 = now_ns();
    s.top = start_child(&rq, argv, inp[0], outp[1], errp[1], spawn ? entry_cgroup : -1);
    if (s.top < 0) die("fork");
    close(inp[0]);
    close(outp[1]);
    close(errp[1]);
    free(argv);
    int in_w = spawn ? -1 : inp[1], out_r = spawn ? -1 : outp[0], err_r = errp[0];
    if (in_w >= 0) {
        nonblock(in_w);
        if (in_left == 0) { close(in_w); in_w = -1; }
    }
    if (out_r >= 0) nonblock(out_r);
    nonblock(err_r);
    int pidfd = (int)syscall(SYS_pidfd_open, s.top, 0);
    if (pidfd < 0) die("pidfd_open");
    if (spawn) {
        uint32_t pid = (uint32_t)s.top;
        send_msg(REPLY_SPAWNED, &pid, sizeof pid, NULL, 0, NULL, 0);
    }

    struct buf out = {0}, err = {0};
    size_t cap = rq.stdout_cap, keep = rq.stderr_keep ? rq.stderr_keep : 4096;
    uint64_t deadline = rq.wall_ms ? t0 + (uint64_t)rq.wall_ms * 1000000ull : 0;
    int stop = 0, quit = 0, ack_kill = 0;
    int dying_left = 0; /* processes in their exit path outlived the move: reaped after it */
    while (!stop) {
        struct pollfd pf[5];
        int n = 0, i_ctl, i_pid, i_out = -1, i_err = -1, i_in = -1;
        pf[i_ctl = n++] = (struct pollfd){ctl, POLLIN, 0};
        pf[i_pid = n++] = (struct pollfd){pidfd, POLLIN, 0};
        if (out_r >= 0) pf[i_out = n++] = (struct pollfd){out_r, POLLIN, 0};
        if (err_r >= 0) pf[i_err = n++] = (struct pollfd){err_r, POLLIN, 0};
        if (in_w >= 0) pf[i_in = n++] = (struct pollfd){in_w, POLLOUT, 0};
        struct timespec ts, *tsp = NULL;
        if (deadline) {
            uint64_t t = now_ns();
            uint64_t left = deadline > t ? deadline - t : 0;
            ts.tv_sec = (time_t)(left / 1000000000ull);
            ts.tv_nsec = (long)(left % 1000000000ull);
            tsp = &ts;
        }
        int r = ppoll(pf, (nfds_t)n, tsp, NULL);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("ppoll");
        }
        if (r == 0) {
            res.flags |= F_TIMEOUT;
            break;
        }
        if (i_in >= 0 && pf[i_in].revents) {
            ssize_t w = write(in_w, in_data, in_left);
            if (w > 0) {
                in_data += w;
                in_left -= (size_t)w;
            }
            /* EPIPE: it stopped reading its input, which is its own business */
            if (in_left == 0 || (w < 0 && errno != EAGAIN && errno != EINTR)) {
                close(in_w);
                in_w = -1;
            }
        }
        if (i_out >= 0 && pf[i_out].revents) {
            if (pump(out_r, &out, 0) < 0) { close(out_r); out_r = -1; }
            if (out.len > cap) { res.flags |= F_STDOUT_OVER; break; }
        }
        if (i_err >= 0 && pf[i_err].revents && pump(err_r, &err, keep) < 0) {
            close(err_r);
            err_r = -1;
        }
        if (pf[i_ctl].revents) {
            struct msg c;
            if (!read_msg(&c)) { quit = 1; break; }
            if (c.op == OP_ABORT && c.len >= 4) {
                memcpy(&res.abort_reason, c.data, 4);
                res.flags |= F_ABORTED;
                stop = 1;
            } else if (c.op == OP_KILL) {
                ack_kill = stop = 1;
            } else if (c.op == OP_QUIT) {
                quit = stop = 1;
            }
            for (int k = 0; k < c.nfds; k++) close(c.fds[k]);
            free(c.data);
            if (stop) break;
        }
        if (pf[i_pid].revents) {
            int st;
            struct rusage ru;
            pid_t w;
            do w = wait4(s.top, &st, __WALL, &ru);
            while (w < 0 && errno == EINTR);
            if (w == s.top) account(&s, w, st, &ru);
            res.wall_us = (now_ns() - t0) / 1000;
            /* everything it wrote before exiting is in the pipes now */
            for (int k = 0; k < 64 && out_r >= 0 && out.len <= cap; k++) {
                ssize_t got = pump(out_r, &out, 0);
                if (got < 0) { close(out_r); out_r = -1; }
                if (got <= 0) break;
            }
            if (out.len > cap) res.flags |= F_STDOUT_OVER;
            for (int k = 0; k < 64 && err_r >= 0; k++) {
                ssize_t got = pump(err_r, &err, keep);
                if (got < 0) { close(err_r); err_r = -1; }
                if (got <= 0) break;
            }
            /*
             * Anyone left? The move is not over until every process it left is
             * gone or in the kernel's exit path: until then, at most
             * exit_grace_ms and never past the deadline, the clock runs on the
             * move's wall time (and what they use, on its CPU), so nothing a
             * leftover does after the exit is free. One still alive and not
             * exiting then is left_processes (docs/config.md).
             */
            uint64_t grace_end = now_ns() + (uint64_t)rq.exit_grace_ms * 1000000ull;
            if (deadline && grace_end > deadline) grace_end = deadline;
            long seen[MAX_REMEMBERED];
            int nseen = 0;
            while (reap_exited(&s) && count_alive(NULL, seen, &nseen) > 0) {
                uint64_t t = now_ns();
                if (t >= grace_end) {
                    if (deadline && t >= deadline) res.flags |= F_TIMEOUT;
                    else {
                        res.flags |= F_LEFT;
                        res.left_count = count_alive(res.left_comm, seen, &nseen);
                    }
                    break;
                }
                struct timespec nap = {0, 1000000L};
                nanosleep(&nap, NULL);
            }
            /* the move ends here: what is left is in its exit path, or is killed now */
            res.wall_us = (now_ns() - t0) / 1000;
            dying_left = reap_exited(&s);
            break;
        }
    }
    if (!s.top_reaped || (res.flags & (F_LEFT | F_TIMEOUT | F_STDOUT_OVER | F_ABORTED)) || dying_left ||
        ack_kill || quit) {
        if (!s.top_reaped) res.flags |= F_KILLED;
        if (quit) kill_all(&s);
        else if (!kill_all_for(&s, REAP_BUDGET_NS)) dying = 1;
    }
    if (!res.wall_us) res.wall_us = (now_ns() - t0) / 1000;
    close(pidfd);
    if (in_w >= 0) close(in_w);
    if (out_r >= 0) close(out_r);
    if (err_r >= 0) {
        /* the last words of a killed process */
        pump(err_r, &err, keep);
        close(err_r);
    }
    if (quit) _exit(0);
    if (s.top_reaped && WIFEXITED(s.status)) {
        res.flags |= F_EXITED;
        res.exit_code = WEXITSTATUS(s.status);
    } else if (s.top_reaped && WIFSIGNALED(s.status)) {
        res.flags |= F_SIGNALED;
        res.signo = WTERMSIG(s.status);
    }
    res.cpu_us = s.cpu_us;
    res.maxrss_kb = s.maxrss_kb;
    size_t olen = out.len > cap ? cap : out.len;
    size_t elen = err.len > keep ? keep : err.len;
    res.stdout_len = (uint32_t)olen;
    res.stderr_len = (uint32_t)elen;
    send_msg(REPLY_RESULT, &res, sizeof res, out.p, (uint32_t)olen, err.p + (err.len - elen), (uint32_t)elen);
    if (ack_kill) send_msg(REPLY_OK, NULL, 0, NULL, 0, NULL, 0);
    free(out.p);
    free(err.p);
}

/*
 * The private tmpfs with inode caps (argv[4]: "PATH:BYTES:INODES,..."):
 * bubblewrap's --tmpfs takes a size but no inode count, and an uncapped tmpfs
 * holds millions of empty files (kernel memory that no process maps). bwrap
 * gives us CAP_SYS_ADMIN in the sandbox's user namespace for this alone; we
 * mount in a mount namespace of our own (the one bwrap made belongs to a
 * user namespace we hold no capability in). The manager keeps its
 * capabilities to make each game's namespaces and runs no entry code; each
 * game's init drops every one before it reads a single request (game_init).
 */
/* the tmpfs mounted afresh by each game's init (/tmp, /dev/shm, /entry) */
#define MAX_GAME_TMPFS 4
static struct { char path[64], opts[128]; } game_tmpfs[MAX_GAME_TMPFS];
static int n_game_tmpfs = 0;

static void setup_mounts(char *spec) {
    if (unshare(CLONE_NEWNS) < 0) die("unshare mount namespace");
    for (char *item = strtok(spec, ","); item; item = strtok(NULL, ",")) {
        char *bytes = strchr(item, ':');
        char *inodes = bytes ? strchr(bytes + 1, ':') : NULL;
        if (!inodes) { errno = EINVAL; die("mount spec"); }
        *bytes++ = 0;
        *inodes++ = 0;
        char opts[128];
        snprintf(opts, sizeof opts, "size=%s,nr_inodes=%s,mode=0755", bytes, inodes);
        if (mount("tmpfs", item, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) die(item);
        /* never left out: nobody empties these between games */
        if (n_game_tmpfs == MAX_GAME_TMPFS || strlen(item) >= sizeof game_tmpfs[0].path) {
            errno = EINVAL;
            die("mount spec");
        }
        strcpy(game_tmpfs[n_game_tmpfs].path, item);
        strcpy(game_tmpfs[n_game_tmpfs].opts, opts);
        n_game_tmpfs++;
    }
    /* bwrap's --chdir left us in the tmpfs the new /entry now covers */
    if (chdir(entry_root) < 0) die("chdir");
}

/* Close every fd from 3 up but the (up to three) given ones (-1: none). */
static void close_all_but(int a, int b, int c) {
    int keep[3] = {a, b, c};
    for (int i = 0; i < 3; i++) /* sort, three elements */
        for (int j = i + 1; j < 3; j++)
            if (keep[j] < keep[i]) { int t = keep[i]; keep[i] = keep[j]; keep[j] = t; }
    unsigned lo = 3;
    for (int i = 0; i < 3; i++) {
        if (keep[i] < 3) continue;
        if ((unsigned)keep[i] > lo) syscall(SYS_close_range, lo, (unsigned)keep[i] - 1u, 0u);
        lo = (unsigned)keep[i] + 1u;
    }
    syscall(SYS_close_range, lo, ~0u, 0u);
}

/* No capability survives into anything we exec, and nothing can gain one. */
static void drop_capabilities(void) {
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &hdr, none) < 0) die("capset");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die("no_new_privs");
}

/* ---- games: fresh PID and IPC namespaces for each, a network one as fresh -- */

/*
 * The launcher bwrap starts is the sandbox's manager: it keeps the capabilities
 * bwrap gave it (CAP_SYS_ADMIN and CAP_NET_ADMIN, in the sandbox's own user
 * namespace) and never runs entry code. Each game is played by a game's init,
 * its child: PID 1 of new PID and IPC namespaces, with /proc mounted for them,
 * in a network namespace the manager gives it at its "go" (a fresh one, or the
 * last game's if that one shows nothing of it: above), every capability
 * dropped. It serves the host's requests for that game; at OP_RESET it kills
 * its game (do_reset), says so and exits, and its namespaces go with it: the
 * next game finds the PID counter at 1, loopback's counters at zero, no
 * socket, no SysV object and no file of the last game (docs/config.md,
 * "Sandbox reuse").
 *
 * The manager makes the next game's init while a game is played (a spare,
 * waiting for its "go"), and a fresh network namespace for after a game that
 * used its own: a reset costs the host one hand-over and a look at the last
 * game's network namespace, not a namespace set-up.
 */
struct game {
    int go_w;   /* a byte, GO_FRESH or GO_REUSE: take over the control socket in that network namespace */
    int done_r; /* a byte: my game is reset and I am leaving; EOF without it: I failed or quit */
};

/* fork() into new namespaces: glibc's clone() wants a stack of its own, and
   bubblewrap does the same (raw_clone) */
static pid_t clone_namespaces(unsigned long flags) {
#if defined(__s390__) || defined(__CRIS__)
    return (pid_t)syscall(SYS_clone, NULL, flags | SIGCHLD, NULL, NULL, NULL);
#else
    return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
#endif
}

/* ---- network namespaces: fresh, or the last game's if it left no trace ---- */

/*
 * Making a network namespace (and tearing one down) is most of what a game's
 * set-up costs, so a game whose network namespace shows nothing of its game
 * hands it on to the next game instead of a fresh one (docs/sandbox.md, "A
 * game's network namespace"). The manager makes every network namespace, brings its
 * loopback up and keeps an fd of it; a game's init joins the one it is told at
 * its "go". After a game, the manager looks at what its namespace shows:
 *
 *   - /proc/net/sockstat and sockstat6: no socket of any family alive (unix
 *     and netlink ones included: "sockets: used"), none in use or in TIME_WAIT,
 *     no fragment queued; the global figures (alloc, mem, orphan) are not the
 *     namespace's and are left out;
 *   - every other file of /proc/net (net_rule_of has the few left out, and
 *     why): byte for byte as it read when the namespace was made, loopback just
 *     up. Every packet, every failed send (no route), every TCP open or reset
 *     counts in dev, snmp, snmp6 or netstat; a route copy a connected socket
 *     leaves in rt6_stats and ipv6_route; a flow label in ip6_flowlabel.
 *
 * What a game could leave that shows nowhere, or only after the look, the
 * entry may not make (entry_filter.h): flow labels, which outlive their socket
 * by their linger, multicast and anycast joins, whose reports a timer sends
 * after the game, and sockets of families other than unix, inet and inet6.
 * Nothing else of a network namespace can change without a capability the
 * entry never has (addresses, routes, links, netfilter, sysctls: the entry is
 * not the sandbox user namespace's root) or without leaving one of the above.
 * Anything unreadable or different: a fresh one, as before. A socket freed
 * only after an RCU grace period (netlink, a bound UDP socket) still counts
 * as used: fresh.
 */
/* the most /proc/net files a namespace is read through (a kernel shows about 60) */
#define NET_MAX_FILES 160

/*
 * How each /proc/net file is judged. Every file the kernel shows is read (a
 * newer kernel's new file included: whatever it holds must read as it did),
 * but for these:
 *   - sockstat, sockstat6: no socket of the namespace alive, none in TIME_WAIT,
 *     no fragment (their alloc, mem and orphan figures are the machine's);
 *   - the lists of sockets and connections (tcp, tcp6, udp, udp6, udplite,
 *     udplite6, raw, raw6, unix, packet, nf_conntrack, nf_conntrack_expect):
 *     each line is a socket sockstat counts ("sockets: used" counts every
 *     socket of the namespace, of every family; TCP's "tw" its TIME_WAITs) or
 *     was made by a packet, which the counters count; and reading them walks
 *     the machine's whole tables (tcp and tcp6: 7-8 ms each here), so they
 *     are not read;
 *   - the machine's figures alone, the same in every namespace and moving with
 *     whatever else the machine does: softnet_stat (per-CPU packet counts),
 *     stat/rt_cache, stat/arp_cache and stat/ndisc_cache (the machine's route
 *     and neighbour tables' statistics), protocols (its per-namespace column,
 *     sockets in use, is in sockstat already).
 * So rt6_stats and ipv6_route are read whole: a connected IPv6 socket leaves a
 * per-CPU copy of its route behind, counted there, though no packet was sent;
 * and so are ip6_flowlabel, igmp, igmp6, mcfilter and the rest.
 */
enum net_rule { NET_SAME, NET_NO_SOCKETS, NET_NOT_READ };

static enum net_rule net_rule_of(const char *name) {
    static const char *const not_read[] = {
        "tcp", "tcp6", "udp", "udp6", "udplite", "udplite6", "raw", "raw6", "unix", "packet",
        "nf_conntrack", "nf_conntrack_expect", /* counted elsewhere (above) */
        "softnet_stat", "stat/rt_cache", "stat/arp_cache", "stat/ndisc_cache", "protocols", /* the machine's */
    };
    if (!strcmp(name, "sockstat") || !strcmp(name, "sockstat6")) return NET_NO_SOCKETS;
    for (size_t i = 0; i < sizeof not_read / sizeof not_read[0]; i++)
        if (!strcmp(name, not_read[i])) return NET_NOT_READ;
    return NET_SAME;
}

struct net_file {
    int fd;              /* opened in its namespace */
    enum net_rule rule;
    char *baseline;      /* NET_SAME: how it read when the namespace was made */
};

struct netns {
    int fd;       /* its /proc/thread-self/ns/net; -1: none */
    int nfiles;   /* -1: its /proc/net could not be read whole: never reused */
    struct net_file files[NET_MAX_FILES];
};

static struct netns net_cur = {.fd = -1};   /* the game being played has it */
static struct netns net_ready = {.fd = -1}; /* fresh, loopback up, for a game after a used one */

enum { GO_FRESH = 'f', GO_REUSE = 'r' };

/*
 * A /proc/net file opened in its namespace, read from the start (NUL-ended in
 * buf; -1 if unreadable or over cap). The files stay open from the namespace's
 * making so a look costs no setns and no /proc lookups (open is most of a
 * read), and a /proc/net file opened in a namespace shows that one ever after.
 */
static ssize_t read_net_file(int fd, char *buf, size_t cap) {
    size_t len = 0;
    if (fd < 0) return -1;
    for (;;) {
        if (len + 1 >= cap) return -1;
        ssize_t r = pread(fd, buf + len, cap - 1 - len, (off_t)len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        len += (size_t)r;
    }
    buf[len] = 0;
    return (ssize_t)len;
}

/* 1 if a sockstat file counts no socket, no TIME_WAIT, no fragment of its namespace. */
static int no_sockets(char *text) {
    const char *name = "";
    int ok = 1;
    for (char *save, *w = strtok_r(text, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
        if (w[0] >= '0' && w[0] <= '9') {
            int counted = !strcmp(name, "used") || !strcmp(name, "inuse") || !strcmp(name, "tw") ||
                          !strcmp(name, "memory");
            if (counted && strcmp(w, "0") != 0) ok = 0;
        }
        name = w;
    }
    return ok;
}

/*
 * Open (and read the baseline of) every file under dir (relative to
 * /proc/thread-self/net, "" for itself) into n; 0, or -1 if any could not be
 * (then the namespace is never handed on: a check that cannot read all of it
 * proves nothing).
 */
static int open_net_files(struct netns *n, const char *dir, char *buf, size_t cap) {
    char path[512];
    snprintf(path, sizeof path, "/proc/thread-self/net%s%.200s", *dir ? "/" : "", dir);
    DIR *d = opendir(path);
    if (!d) return -1;
    int ok = 0;
    for (struct dirent *e; ok == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char name[256];
        if (snprintf(name, sizeof name, "%.120s%s%.120s", dir, *dir ? "/" : "", e->d_name) >= (int)sizeof name ||
            strlen(e->d_name) > 120 || strlen(dir) > 120) { ok = -1; break; }
        snprintf(path, sizeof path, "/proc/thread-self/net/%s", name);
        struct stat st;
        if (stat(path, &st) < 0) { ok = -1; break; }
        if (S_ISDIR(st.st_mode)) { ok = open_net_files(n, name, buf, cap); continue; }
        enum net_rule rule = net_rule_of(name);
        if (rule == NET_NOT_READ) continue;
        if (n->nfiles >= NET_MAX_FILES) { ok = -1; break; }
        struct net_file *f = &n->files[n->nfiles];
        f->fd = open(path, O_RDONLY | O_CLOEXEC);
        f->rule = rule;
        f->baseline = NULL;
        /* one the manager, root of the sandbox's user namespace, may not read (netfilter's
           logs: the machine's root's), no game, which has less, reads either */
        if (f->fd < 0 && (errno == EACCES || errno == EPERM)) continue;
        if (f->fd < 0) { ok = -1; break; }
        n->nfiles++;
        if (rule == NET_SAME && (read_net_file(f->fd, buf, cap) < 0 || !(f->baseline = strdup(buf)))) ok = -1;
    }
    closedir(d);
    return ok;
}

/*
 * A fresh network namespace with loopback up (die: no game can be played
 * without one). The manager is left in it: it cannot go back to bwrap's, which
 * belongs to a user namespace it holds no capability in, and it never uses the
 * network, so where it stays makes no difference to any game.
 */
static struct netns make_fresh_net(void) {
    static char buf[1 << 16];
    struct netns n = {.fd = -1, .nfiles = 0};
    if (unshare(CLONE_NEWNET) < 0) die("make a network namespace");
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0) die("read loopback's flags");
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) die("bring loopback up");
    close(s); /* an unbound UDP socket is freed at once: "sockets: used" is back at 0 */
    n.fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (n.fd < 0) die("open a network namespace");
    if (open_net_files(&n, "", buf, sizeof buf) < 0) n.nfiles = -1;
    return n;
}

static void close_net(const struct netns *n) {
    if (n->fd < 0) return;
    close(n->fd);
    for (int i = 0; i < n->nfiles; i++)
        if (n->files[i].fd >= 0) close(n->files[i].fd);
}

static void drop_net(struct netns *n) {
    close_net(n);
    for (int i = 0; i < n->nfiles; i++) free(n->files[i].baseline);
    n->fd = -1;
    n->nfiles = 0;
}

/*
 * 1 if the namespace reads as it did when it was made: the next game may have
 * it as a fresh one. The sockstat files first: a game that used the network
 * most often still holds a socket there, and they are short.
 */
static int net_untouched(const struct netns *n) {
    static char buf[1 << 16];
    if (n->nfiles <= 0) return 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n->nfiles; i++) {
            const struct net_file *f = &n->files[i];
            if ((f->rule == NET_NO_SOCKETS) != (pass == 0)) continue;
            if (read_net_file(f->fd, buf, sizeof buf) < 0) return 0;
            if (f->rule == NET_NO_SOCKETS ? !no_sockets(buf) : strcmp(buf, f->baseline) != 0) return 0;
        }
    return 1;
}

static void game_fail(const char *what) {
    fprintf(stderr, "tourney launcher: a game's namespaces: %s: %s\n", what, strerror(errno));
    _exit(112);
}

/* The game's init: its namespaces made ready, then the host's requests until a reset. */
static void game_init(int go_r, int done_w) {
    signal(SIGCHLD, SIG_DFL);
    /* our mounts are ours: none of them propagates back to the manager */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) game_fail("make mounts private");
    /* a /proc of this PID namespace: the entry sees its own game's processes only */
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) game_fail("mount /proc");
    char go;
    ssize_t r;
    do r = read(go_r, &go, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1) _exit(0); /* the manager is gone: so is the sandbox */
    close(go_r);
    /* the last game's network namespace if it left no trace, else the fresh one (manage_games):
       our copies of net_cur and net_ready are the manager's when it made us, while that game played */
    if (setns(go == GO_REUSE ? net_cur.fd : net_ready.fd, CLONE_NEWNET) < 0) game_fail("join a network namespace");
    /* none of them may reach the entry, nor keep an unused namespace alive */
    close_net(&net_cur);
    close_net(&net_ready);
    /*
     * /entry, /tmp and /dev/shm of this game alone: a fresh tmpfs also numbers
     * its inodes afresh (a reused one would count on from the last game's
     * files). Mounted after the "go": until then the manager's /entry is what
     * this init shows, so the host tells the game's init from a spare by it
     * (bwrap.py Sandbox.game_pid).
     */
    for (int i = 0; i < n_game_tmpfs; i++)
        if (mount("tmpfs", game_tmpfs[i].path, "tmpfs", MS_NOSUID | MS_NODEV, game_tmpfs[i].opts) < 0)
            game_fail(game_tmpfs[i].path);
    if (chdir(entry_root) < 0) game_fail("chdir");
    drop_capabilities();
    /*
     * Once per game, here, rather than in every move's child before its exec:
     * every process of the game descends from this init and inherits the
     * filter, and installing one costs 40-60 us, a tenth of a native move.
     * Nothing this init does from here on (requests, vfork+exec, kills, cgroup
     * writes) is on the filter's list (entry_filter.h); the manager, which makes
     * namespaces and mounts, stays unfiltered.
     */
    if (install_entry_filter() < 0) game_fail("install the seccomp filter");
    for (;;) {
        struct msg m;
        if (dying) { /* a killed move's last processes: gone before anything else runs */
            kill_all(NULL);
            dying = 0;
        }
        if (!read_msg(&m)) break;
        switch (m.op) {
        case OP_PUT: do_put(&m); break;
        case OP_SYNC: do_sync(); break;
        case OP_RUN: session(&m, 0); break;
        case OP_SPAWN: session(&m, 1); break;
        case OP_KILL:
            kill_all(NULL);
            send_msg(REPLY_OK, NULL, 0, NULL, 0, NULL, 0);
            break;
        case OP_RESET: /* the next game's init answers the SYNC after the fresh working copy's PUTs */
            kill_all(NULL);
            do_reset();
            if (write(done_w, "r", 1) != 1) _exit(113);
            _exit(0);
        case OP_QUIT: kill_all(NULL); _exit(0);
        default: break; /* OP_ABORT after the move ended: nothing to stop */
        }
        for (int k = 0; k < m.nfds; k++) close(m.fds[k]);
        free(m.data);
    }
    kill_all(NULL);
    _exit(0);
}

/* A game's init, waiting for its "go" (die: the sandbox cannot play without one). */
static struct game start_game(void) {
    int go[2], done[2];
    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0) die("pipe");
    pid_t pid = clone_namespaces(CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS);
    if (pid < 0) die("clone a game's namespaces");
    if (pid == 0) {
        close(go[1]);
        close(done[0]);
        game_init(go[0], done[1]);
    }
    close(go[0]);
    close(done[1]);
    return (struct game){go[1], done[0]};
}

static void end_sandbox(int status) {
    kill(-1, SIGKILL);
    while (wait(NULL) > 0 || errno == EINTR) {}
    _exit(status);
}

/* The manager: games one after another, until one ends without a reset. */
static void manage_games(void) {
    /* no zombie game inits: the kernel reaps them (each game's init undoes this) */
    signal(SIGCHLD, SIG_IGN);
    /* not before the host's first request: until then it may still be moving us
       into the sandbox's cgroup, and a game's init made earlier would stay out */
    struct pollfd first = {ctl, POLLIN, 0};
    while (poll(&first, 1, -1) < 0)
        if (errno != EINTR) die("poll");
    net_ready = make_fresh_net();
    struct game cur = start_game(), spare;
    if (write(cur.go_w, (char[]){GO_FRESH}, 1) != 1) die("start a game");
    net_cur = net_ready;
    net_ready = make_fresh_net();
    spare = start_game();
    for (;;) {
        char done;
        ssize_t r;
        do r = read(cur.done_r, &done, 1);
        while (r < 0 && errno == EINTR);
        if (r != 1) end_sandbox(0); /* it quit, failed, or the host is gone */
        /* every process of the game is reaped: what its namespace shows now is all it left */
        int reuse = net_untouched(&net_cur);
        if (write(spare.go_w, (char[]){reuse ? GO_REUSE : GO_FRESH}, 1) != 1) end_sandbox(1);
        close(cur.go_w);
        close(cur.done_r);
        /* the old init's namespaces are torn down (and it is reaped: SIGCHLD is
           ignored here) while the next game is already being answered; a used
           network namespace is replaced by a fresh one made meanwhile too */
        if (!reuse) {
            drop_net(&net_cur);
            net_cur = net_ready;
            net_ready = make_fresh_net();
        }
        cur = spare;
        spare = start_game();
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: launcher CONTROL_FD [ENTRY_DIR [ENTRY_CGROUP_FD|-1 [MOUNTS]]]\n");
        return 2;
    }
    ctl = atoi(argv[1]);
    if (argc > 2) entry_root = argv[2];
    if (argc > 3) entry_cgroup = atoi(argv[3]);
    if (argc > 4 && argv[4][0]) setup_mounts(argv[4]);
    if (ctl < 3 || fcntl(ctl, F_SETFD, FD_CLOEXEC) < 0) die("control fd");
    if (entry_cgroup >= 0 && (entry_cgroup < 3 || entry_cgroup == ctl ||
                              fcntl(entry_cgroup, F_SETFD, FD_CLOEXEC) < 0))
        die("cgroup fd");
    /* nothing but the control socket (and the cgroup file, close-on-exec)
       may reach the entry's processes */
    close_all_but(ctl, entry_cgroup, -1);
    prctl(PR_SET_DUMPABLE, 0);
    /* a write to a pipe its reader closed must not kill the launcher */
    signal(SIGPIPE, SIG_IGN);
    manage_games();
    return 0;
}
