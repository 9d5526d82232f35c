/*
 * The seccomp filter of every entry program (included by launcher.c; the
 * rule and the list are in README's "The sandbox as a trust boundary" and
 * docs/config.md "What the sandbox refuses and charges").
 *
 * All sandboxes run as the same uid, so whatever the kernel keys by uid alone
 * is shared between them: keyrings above all (/proc/keys of one sandbox listed
 * another's, KEYCTL_GET_PERSISTENT outlived a reset). As container runtimes
 * do, the entry may not make the system calls that reach such state, or the
 * kernel's larger attack surface, and that no contest program needs.
 *
 * Why here and hand-written: bwrap --seccomp would filter the launcher too,
 * and the launcher needs unshare/mount at start and its reset; libseccomp is
 * not on every CI machine (no libseccomp-dev), and the list is short. So each
 * game's init installs it once, after dropping its capabilities (launcher.c
 * game_init): every move, persistent process and build of the game descends
 * from it and inherits it; the manager, which makes namespaces, stays
 * unfiltered.
 *
 * What a refused call gets: EPERM, never a kill, so a runtime that probes
 * (a JIT trying io_uring or userfaultfd, a libc trying clone3) falls back and
 * the verdict stays about the entry's moves. clone3 gets ENOSYS instead
 * (its flags are in memory, which a filter cannot read): glibc then falls
 * back to clone, whose flags the filter does read, as under Docker. A call
 * of another ABI (i386 through int 0x80, x32 numbers) is refused with EPERM
 * as well: it is never legitimate here and must not slip past the numbers
 * below, which are the native ones. A socket family no game needs gets
 * EAFNOSUPPORT, as from a kernel built without it (below).
 *
 * Cost: the kernel caches "always allowed" per system call number (5.11+),
 * so only clone, personality and the socket calls (socket, socketpair,
 * setsockopt: their arguments decide) run the filter at all; installing it is one
 * system call per exec, 40-60 us here (README, "The sandbox as a trust
 * boundary", has the per-move figure).
 */
#ifndef TOURNEY_ENTRY_FILTER_H
#define TOURNEY_ENTRY_FILTER_H

#include <errno.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ENTRY_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ENTRY_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "entry_filter.h: unknown architecture (add its AUDIT_ARCH_*)"
#endif

/* x86_64 numbers of calls older C library headers may lack (they are refused all the same) */
#if defined(__x86_64__)
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#define __NR_io_uring_enter 426
#define __NR_io_uring_register 427
#endif
#ifndef __NR_open_tree
#define __NR_open_tree 428
#define __NR_move_mount 429
#define __NR_fsopen 430
#define __NR_fsconfig 431
#define __NR_fsmount 432
#define __NR_fspick 433
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_process_madvise
#define __NR_process_madvise 440
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_quotactl_fd
#define __NR_quotactl_fd 443
#endif
#define ENTRY_X32_SYSCALL_BIT 0x40000000u
#endif
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

/* every CLONE_NEW* flag clone(2) takes (CLONE_NEWTIME shares its bit with the exit signal there) */
#define ENTRY_CLONE_NEW_FLAGS 0x7E020000u
/* personality(2) values allowed: PER_LINUX, PER_LINUX32, UNAME26 (and with PER_LINUX32), the
   0xffffffff query (as Docker), and ADDR_NO_RANDOMIZE, which only turns off the entry's own ASLR */
#define ENTRY_PER_LINUX 0x0u
#define ENTRY_PER_LINUX32 0x8u
#define ENTRY_UNAME26 0x20000u
#define ENTRY_ADDR_NO_RANDOMIZE 0x40000u
#define ENTRY_PER_QUERY 0xffffffffu

/* what the filter does with a call it names */
enum entry_rule {
    ENTRY_REFUSE,      /* EPERM */
    ENTRY_NO_SUCH,     /* ENOSYS: clone3, so the C library falls back to clone */
    ENTRY_CLONE,       /* threads and forks yes, CLONE_NEW* no (EPERM) */
    ENTRY_PERSONALITY, /* the harmless values above yes, others EPERM */
    ENTRY_SOCKET,      /* socket, socketpair: AF_UNIX, AF_INET, AF_INET6 yes, others EAFNOSUPPORT */
    ENTRY_SOCKOPT,     /* setsockopt: the options of entry_refused_sockopts EPERM, others yes */
};

/*
 * Socket families (issue 34): a game speaks over pipes, unix sockets or
 * loopback TCP/UDP, nothing else. The others are kernel code no contest
 * program needs, and some reach past the sandbox's limits: netlink receive
 * queues are charged to no cgroup (20 unread netlink sockets held 160 MiB
 * under memory_mb 64), vsock is not confined by the network namespace (a VM
 * worker's hypervisor services), packet, alg, xdp and the rest are attack
 * surface. A refused family gets EAFNOSUPPORT, as from a kernel without it,
 * so a program that probes (glibc's getaddrinfo asks netlink for the
 * machine's addresses) carries on. The kernel reads the family as an int: the
 * low 32 bits are compared, as the kernel would.
 */
static const unsigned entry_socket_families[] = {1 /* AF_UNIX */, 2 /* AF_INET */, 10 /* AF_INET6 */};

/*
 * Socket options that leave state behind the socket, where the reuse check of
 * a game's network namespace cannot see it (launcher.c, net_untouched), or in
 * a table every sandbox of the machine shares: EPERM.
 *
 * - IPv6 flow labels (IPV6_FLOWLABEL_MGR, IPV6_FLOWINFO_SEND, which only
 *   serves labels): a label outlives its socket by up to 150 s, so a game read
 *   back the last game's SECRET42 from a reused namespace, and the label table
 *   is the machine's (4096 at most): one sandbox filling it made every other
 *   sandbox's labels fail, a channel between live games.
 * - Multicast and anycast joins: a join and the leave at close send their
 *   reports from a timer, after the game's end, so the namespace the check
 *   passed changes under the next game.
 */
struct entry_sockopt {
    unsigned level, name;
};
static const struct entry_sockopt entry_refused_sockopts[] = {
    {41 /* SOL_IPV6 */, 32 /* IPV6_FLOWLABEL_MGR */},
    {41, 33 /* IPV6_FLOWINFO_SEND */},
    {41, 20 /* IPV6_ADD_MEMBERSHIP */},
    {41, 27 /* IPV6_JOIN_ANYCAST */},
    {41, 42 /* MCAST_JOIN_GROUP */},
    {41, 46 /* MCAST_JOIN_SOURCE_GROUP */},
    {0 /* SOL_IP */, 35 /* IP_ADD_MEMBERSHIP */},
    {0, 39 /* IP_ADD_SOURCE_MEMBERSHIP */},
    {0, 42 /* MCAST_JOIN_GROUP */},
    {0, 46 /* MCAST_JOIN_SOURCE_GROUP */},
};
#define ENTRY_NSOCKOPTS (sizeof entry_refused_sockopts / sizeof entry_refused_sockopts[0])

struct entry_syscall {
    unsigned nr;
    enum entry_rule rule;
};

#define ENTRY_DENY(name) {__NR_##name, ENTRY_REFUSE}

/* The list (README and docs/config.md repeat it): calls no contest program needs. */
static const struct entry_syscall entry_syscalls[] = {
    {__NR_clone3, ENTRY_NO_SUCH},
    {__NR_clone, ENTRY_CLONE},
    {__NR_personality, ENTRY_PERSONALITY},
    {__NR_socket, ENTRY_SOCKET},
    {__NR_socketpair, ENTRY_SOCKET},
    {__NR_setsockopt, ENTRY_SOCKOPT},
    /* kernel keyrings: keyed by uid, so shared between sandboxes */
    ENTRY_DENY(keyctl), ENTRY_DENY(add_key), ENTRY_DENY(request_key),
    /* other processes' memory, descriptors and execution */
    ENTRY_DENY(ptrace), ENTRY_DENY(process_vm_readv), ENTRY_DENY(process_vm_writev),
    ENTRY_DENY(process_madvise), ENTRY_DENY(pidfd_getfd), ENTRY_DENY(kcmp),
    /* namespaces and mounts: the sandbox's shape is the launcher's */
    ENTRY_DENY(unshare), ENTRY_DENY(setns), ENTRY_DENY(mount), ENTRY_DENY(umount2),
    ENTRY_DENY(pivot_root), ENTRY_DENY(chroot), ENTRY_DENY(move_mount), ENTRY_DENY(open_tree),
    ENTRY_DENY(fsopen), ENTRY_DENY(fsmount), ENTRY_DENY(fsconfig), ENTRY_DENY(fspick),
    ENTRY_DENY(mount_setattr),
    /* large kernel attack surface */
    ENTRY_DENY(bpf), ENTRY_DENY(perf_event_open), ENTRY_DENY(userfaultfd),
    ENTRY_DENY(io_uring_setup), ENTRY_DENY(io_uring_enter), ENTRY_DENY(io_uring_register),
    ENTRY_DENY(open_by_handle_at), ENTRY_DENY(name_to_handle_at), ENTRY_DENY(fanotify_init),
    ENTRY_DENY(lookup_dcookie),
    /* the machine's, never an entry's: modules, kexec, swap, reboot, accounting, quotas, clock */
    ENTRY_DENY(init_module), ENTRY_DENY(finit_module), ENTRY_DENY(delete_module),
    ENTRY_DENY(kexec_load), ENTRY_DENY(kexec_file_load), ENTRY_DENY(swapon), ENTRY_DENY(swapoff),
    ENTRY_DENY(reboot), ENTRY_DENY(acct), ENTRY_DENY(quotactl), ENTRY_DENY(quotactl_fd),
    ENTRY_DENY(syslog), ENTRY_DENY(settimeofday), ENTRY_DENY(clock_settime),
    ENTRY_DENY(clock_adjtime), ENTRY_DENY(adjtimex), ENTRY_DENY(sethostname),
    ENTRY_DENY(setdomainname), ENTRY_DENY(vhangup),
#ifdef __NR_iopl
    ENTRY_DENY(iopl), ENTRY_DENY(ioperm),
#endif
#ifdef __NR_uselib
    ENTRY_DENY(uselib), ENTRY_DENY(ustat), ENTRY_DENY(sysfs), ENTRY_DENY(_sysctl),
    ENTRY_DENY(create_module), ENTRY_DENY(get_kernel_syms), ENTRY_DENY(query_module),
    ENTRY_DENY(nfsservctl),
#endif
};

#define ENTRY_NCALLS (sizeof entry_syscalls / sizeof entry_syscalls[0])
/* calls compared one after another at a leaf of the search tree */
#define ENTRY_LEAF 4
#define ENTRY_MAX_INSNS 256

/*
 * The program, built once when the launcher starts (a constructor: nothing
 * to call) and installed by every child. Built, not a literal: a binary
 * search over the sorted numbers. The kernel works out at install time, by
 * running the filter for every system call number of both ABIs, which calls
 * it may always allow; over a straight list of ~70 comparisons that cost
 * ~170-300 us per exec here (vfork+install+exit), a search tree ~15 steps a
 * number. Jumps go forward only, to the shared blocks at the end.
 */
static struct sock_filter entry_prog[ENTRY_MAX_INSNS];
static unsigned short entry_prog_len; /* 0: not built (install refuses to run the entry) */

enum entry_label { L_SOCKET, L_SOCKOPT, L_CLONE, L_PERSONALITY, L_EPERM, L_ALLOW, L_ENOSYS, L_EAFNOSUPPORT, ENTRY_NLABELS };

struct entry_builder {
    unsigned n, nfix, bad;
    struct entry_syscall sorted[ENTRY_NCALLS];
    struct { unsigned at; enum entry_label to; int in_k; } fix[ENTRY_MAX_INSNS];
    unsigned label[ENTRY_NLABELS];
};

static unsigned entry_emit(struct entry_builder *b, struct sock_filter insn) {
    if (b->n >= ENTRY_MAX_INSNS) { b->bad = 1; return 0; }
    entry_prog[b->n] = insn;
    return b->n++;
}

/* a jump whose target (a label) is known only at the end: jt, or k for BPF_JA */
static void entry_emit_to(struct entry_builder *b, struct sock_filter insn, enum entry_label to, int in_k) {
    unsigned at = entry_emit(b, insn);
    if (b->nfix >= ENTRY_MAX_INSNS) { b->bad = 1; return; }
    b->fix[b->nfix].at = at;
    b->fix[b->nfix].to = to;
    b->fix[b->nfix++].in_k = in_k;
}

static enum entry_label entry_target(enum entry_rule rule) {
    switch (rule) {
    case ENTRY_NO_SUCH: return L_ENOSYS;
    case ENTRY_CLONE: return L_CLONE;
    case ENTRY_PERSONALITY: return L_PERSONALITY;
    case ENTRY_SOCKET: return L_SOCKET;
    case ENTRY_SOCKOPT: return L_SOCKOPT;
    default: return L_EPERM;
    }
}

/* the numbers sorted[lo, hi): "nr >= middle" splits them until a leaf compares each */
static void entry_tree(struct entry_builder *b, unsigned lo, unsigned hi) {
    if (hi - lo <= ENTRY_LEAF) {
        for (unsigned i = lo; i < hi; i++)
            entry_emit_to(b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, b->sorted[i].nr, 0, 0),
                          entry_target(b->sorted[i].rule), 0);
        entry_emit_to(b, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0), L_ALLOW, 1);
        return;
    }
    unsigned mid = lo + (hi - lo) / 2;
    unsigned split = entry_emit(b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, b->sorted[mid].nr, 0, 0));
    entry_tree(b, lo, mid);
    if (b->n - split - 1 > 255) b->bad = 1;
    entry_prog[split].jt = (unsigned char)(b->n - split - 1);
    entry_tree(b, mid, hi);
}

#define ENTRY_STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define ENTRY_RET(action) ENTRY_STMT(BPF_RET | BPF_K, (action))
#define ENTRY_LOAD(offset) ENTRY_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)(offset))
#define ENTRY_EPERM (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define ENTRY_ENOSYS (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))
#define ENTRY_EAFNOSUPPORT (SECCOMP_RET_ERRNO | (EAFNOSUPPORT & SECCOMP_RET_DATA))
#define ENTRY_IS(k) ((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), 0, 0))

__attribute__((constructor)) static void build_entry_filter(void) {
    static struct entry_builder b;
    b.n = b.nfix = b.bad = 0;
    for (unsigned i = 0; i < ENTRY_NCALLS; i++) { /* insertion sort: ~70 entries, once */
        unsigned j = i;
        for (; j > 0 && b.sorted[j - 1].nr > entry_syscalls[i].nr; j--) b.sorted[j] = b.sorted[j - 1];
        b.sorted[j] = entry_syscalls[i];
    }
    /* another ABI's numbers mean other calls: refused before any number is looked at */
    entry_emit(&b, ENTRY_LOAD(offsetof(struct seccomp_data, arch)));
    entry_emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ENTRY_AUDIT_ARCH, 1, 0));
    entry_emit(&b, ENTRY_RET(ENTRY_EPERM));
    entry_emit(&b, ENTRY_LOAD(offsetof(struct seccomp_data, nr)));
#ifdef ENTRY_X32_SYSCALL_BIT
    entry_emit_to(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, ENTRY_X32_SYSCALL_BIT, 0, 0),
                  L_EPERM, 0);
#endif
    entry_tree(&b, 0, ENTRY_NCALLS);
    /* socket, socketpair: the family (argument 0) one of the allowed, else EAFNOSUPPORT */
    b.label[L_SOCKET] = entry_emit(&b, ENTRY_LOAD(offsetof(struct seccomp_data, args[0])));
    for (unsigned i = 0; i < sizeof entry_socket_families / sizeof entry_socket_families[0]; i++)
        entry_emit_to(&b, ENTRY_IS(entry_socket_families[i]), L_ALLOW, 0);
    entry_emit_to(&b, ENTRY_STMT(BPF_JMP | BPF_JA, 0), L_EAFNOSUPPORT, 1);
    /* setsockopt: per level (argument 1), a block comparing the option (argument 2) with that
       level's refused ones; a level without any skips its block (jf), with the level still loaded */
    b.label[L_SOCKOPT] = entry_emit(&b, ENTRY_LOAD(offsetof(struct seccomp_data, args[1])));
    for (unsigned i = 0; i < ENTRY_NSOCKOPTS; i++) {
        unsigned level = entry_refused_sockopts[i].level, first = 1, count = 0;
        for (unsigned j = 0; j < i; j++) first &= entry_refused_sockopts[j].level != level;
        if (!first) continue;
        for (unsigned j = i; j < ENTRY_NSOCKOPTS; j++) count += entry_refused_sockopts[j].level == level;
        /* the block: load the option, one comparison per refused option, allow */
        entry_emit(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, level, 0, (unsigned char)(count + 2)));
        entry_emit(&b, ENTRY_LOAD(offsetof(struct seccomp_data, args[2])));
        for (unsigned j = i; j < ENTRY_NSOCKOPTS; j++)
            if (entry_refused_sockopts[j].level == level) entry_emit_to(&b, ENTRY_IS(entry_refused_sockopts[j].name), L_EPERM, 0);
        entry_emit_to(&b, ENTRY_STMT(BPF_JMP | BPF_JA, 0), L_ALLOW, 1);
    }
    entry_emit_to(&b, ENTRY_STMT(BPF_JMP | BPF_JA, 0), L_ALLOW, 1);
    /* clone: the low 32 bits of its flags (all the kernel takes) */
    b.label[L_CLONE] = entry_emit(&b, ENTRY_LOAD(offsetof(struct seccomp_data, args[0])));
    entry_emit_to(&b, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ENTRY_CLONE_NEW_FLAGS, 0, 0),
                  L_EPERM, 0);
    entry_emit_to(&b, ENTRY_STMT(BPF_JMP | BPF_JA, 0), L_ALLOW, 1);
    /* personality: its argument's low 32 bits, one of the allowed values, else on to EPERM */
    b.label[L_PERSONALITY] = entry_emit(&b, ENTRY_LOAD(offsetof(struct seccomp_data, args[0])));
    static const unsigned allowed[] = {ENTRY_PER_LINUX, ENTRY_PER_LINUX32, ENTRY_UNAME26,
                                       ENTRY_UNAME26 | ENTRY_PER_LINUX32, ENTRY_ADDR_NO_RANDOMIZE,
                                       ENTRY_PER_QUERY};
    for (unsigned i = 0; i < sizeof allowed / sizeof allowed[0]; i++) entry_emit_to(&b, ENTRY_IS(allowed[i]), L_ALLOW, 0);
    b.label[L_EPERM] = entry_emit(&b, ENTRY_RET(ENTRY_EPERM));
    b.label[L_ALLOW] = entry_emit(&b, ENTRY_RET(SECCOMP_RET_ALLOW));
    b.label[L_ENOSYS] = entry_emit(&b, ENTRY_RET(ENTRY_ENOSYS));
    b.label[L_EAFNOSUPPORT] = entry_emit(&b, ENTRY_RET(ENTRY_EAFNOSUPPORT));
    for (unsigned i = 0; i < b.nfix; i++) {
        unsigned at = b.fix[i].at, offset = b.label[b.fix[i].to] - at - 1;
        if (b.fix[i].in_k) entry_prog[at].k = offset;
        else if (offset > 255) b.bad = 1;
        else entry_prog[at].jt = (unsigned char)offset;
    }
    entry_prog_len = b.bad ? 0 : (unsigned short)b.n;
}

/*
 * Install the filter on the calling task (the launcher's child, between
 * vfork and exec: the filter belongs to the task, not to the memory it
 * borrows). The launcher set no_new_privs at start (drop_capabilities), which
 * an unprivileged filter needs; it is set again here so this never depends on
 * that. 0, or -1 with errno (E2BIG: the program did not fit, a bug).
 */
static int install_entry_filter(void) {
    struct sock_fprog prog = {entry_prog_len, entry_prog};
    if (entry_prog_len == 0) {
        errno = E2BIG;
        return -1;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return -1;
    /*
     * SPEC_ALLOW: kernels before 5.16 otherwise turn on speculative store bypass
     * (and STIBP) mitigations for every filtered task, which only guard a process
     * against itself and slow its computing: a move's CPU time must be the
     * program's, filtered or not (5.16+ made that the default). Kernels before
     * 4.17 do not know the flag (EINVAL): install without it there.
     */
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) == 0) return 0;
    if (errno != EINVAL) return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

#endif
