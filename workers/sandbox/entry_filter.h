/*
 * The seccomp filter of every entry program (included by launcher.c; the
 * rule and the list are in README's "The sandbox as a trust boundary" and
 * docs/config.md "Sandbox").
 *
 * All sandboxes run as the same uid, so whatever the kernel keys by uid alone
 * is shared between them: keyrings above all (/proc/keys of one sandbox listed
 * another's, KEYCTL_GET_PERSISTENT outlived a reset). As container runtimes
 * do, the entry may not make the system calls that reach such state, or the
 * kernel's larger attack surface, and that no contest program needs.
 *
 * Why here and hand-written: bwrap --seccomp would filter the launcher too,
 * and the launcher needs unshare/mount at start and its reset; libseccomp is
 * not on every CI machine (no libseccomp-dev), and the list is short. So the
 * launcher's child installs it just before exec (start_child), for every
 * move, persistent process and build; the launcher itself stays unfiltered.
 *
 * What a refused call gets: EPERM, never a kill, so a runtime that probes
 * (a JIT trying io_uring or userfaultfd, a libc trying clone3) falls back and
 * the verdict stays about the entry's moves. clone3 gets ENOSYS instead
 * (its flags are in memory, which a filter cannot read): glibc then falls
 * back to clone, whose flags the filter does read, as under Docker. A call
 * of another ABI (i386 through int 0x80, x32 numbers) is refused with EPERM
 * as well: it is never legitimate here and must not slip past the numbers
 * below, which are the native ones.
 *
 * Cost: the kernel caches "always allowed" per system call number (5.11+),
 * so only clone and personality run the filter at all; installing it is one
 * system call per exec (measured in README's bench table).
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

/* every CLONE_NEW* flag clone(2) takes (CLONE_NEWTIME shares its bit with the exit signal there) */
#define ENTRY_CLONE_NEW_FLAGS 0x7E020000u
/* personality(2) values allowed: PER_LINUX, PER_LINUX32, UNAME26 (and with PER_LINUX32), the
   0xffffffff query (as Docker), and ADDR_NO_RANDOMIZE, which only turns off the entry's own ASLR */
#define ENTRY_PER_LINUX 0x0u
#define ENTRY_PER_LINUX32 0x8u
#define ENTRY_UNAME26 0x20000u
#define ENTRY_ADDR_NO_RANDOMIZE 0x40000u
#define ENTRY_PER_QUERY 0xffffffffu

#define ENTRY_LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, field))
/* the low 32 bits of argument 0 (little-endian), which is all clone and personality look at */
#define ENTRY_LOAD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, args[0]))
#define ENTRY_RET(action) BPF_STMT(BPF_RET | BPF_K, (action))
#define ENTRY_EPERM (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define ENTRY_ENOSYS (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))
/* "if nr == N: EPERM": two instructions, no jump offset to keep right by hand */
#define ENTRY_DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), ENTRY_RET(ENTRY_EPERM)
#define ENTRY_ALLOW_IF(value) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (value), 0, 1), ENTRY_RET(SECCOMP_RET_ALLOW)

static const struct sock_filter entry_filter[] = {
    /* another ABI's numbers mean other calls: refused before any number is looked at */
    ENTRY_LOAD(arch),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ENTRY_AUDIT_ARCH, 1, 0),
    ENTRY_RET(ENTRY_EPERM),
    ENTRY_LOAD(nr),
#ifdef ENTRY_X32_SYSCALL_BIT
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, ENTRY_X32_SYSCALL_BIT, 0, 1),
    ENTRY_RET(ENTRY_EPERM),
#endif
    /* clone3: ENOSYS, so the C library falls back to clone (below) */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
    ENTRY_RET(ENTRY_ENOSYS),
    /* clone: threads and forks yes, new namespaces no */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
    ENTRY_LOAD_ARG0,
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ENTRY_CLONE_NEW_FLAGS, 0, 1),
    ENTRY_RET(ENTRY_EPERM),
    ENTRY_RET(SECCOMP_RET_ALLOW),
    /* personality: only the values above (the kernel takes the low 32 bits) */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, 14),
    ENTRY_LOAD_ARG0,
    ENTRY_ALLOW_IF(ENTRY_PER_LINUX),
    ENTRY_ALLOW_IF(ENTRY_PER_LINUX32),
    ENTRY_ALLOW_IF(ENTRY_UNAME26),
    ENTRY_ALLOW_IF(ENTRY_UNAME26 | ENTRY_PER_LINUX32),
    ENTRY_ALLOW_IF(ENTRY_ADDR_NO_RANDOMIZE),
    ENTRY_ALLOW_IF(ENTRY_PER_QUERY),
    ENTRY_RET(ENTRY_EPERM),
    /* kernel keyrings: shared by uid between sandboxes */
    ENTRY_DENY(__NR_keyctl),
    ENTRY_DENY(__NR_add_key),
    ENTRY_DENY(__NR_request_key),
    /* other processes' memory, descriptors and execution */
    ENTRY_DENY(__NR_ptrace),
    ENTRY_DENY(__NR_process_vm_readv),
    ENTRY_DENY(__NR_process_vm_writev),
    ENTRY_DENY(__NR_process_madvise),
    ENTRY_DENY(__NR_pidfd_getfd),
    ENTRY_DENY(__NR_kcmp),
    /* namespaces and mounts: the sandbox's shape is the launcher's */
    ENTRY_DENY(__NR_unshare),
    ENTRY_DENY(__NR_setns),
    ENTRY_DENY(__NR_mount),
    ENTRY_DENY(__NR_umount2),
    ENTRY_DENY(__NR_pivot_root),
    ENTRY_DENY(__NR_chroot),
    ENTRY_DENY(__NR_move_mount),
    ENTRY_DENY(__NR_open_tree),
    ENTRY_DENY(__NR_fsopen),
    ENTRY_DENY(__NR_fsmount),
    ENTRY_DENY(__NR_fsconfig),
    ENTRY_DENY(__NR_fspick),
    ENTRY_DENY(__NR_mount_setattr),
    /* large kernel attack surface no contest program needs */
    ENTRY_DENY(__NR_bpf),
    ENTRY_DENY(__NR_perf_event_open),
    ENTRY_DENY(__NR_userfaultfd),
    ENTRY_DENY(__NR_io_uring_setup),
    ENTRY_DENY(__NR_io_uring_enter),
    ENTRY_DENY(__NR_io_uring_register),
    ENTRY_DENY(__NR_open_by_handle_at),
    ENTRY_DENY(__NR_name_to_handle_at),
    ENTRY_DENY(__NR_fanotify_init),
    ENTRY_DENY(__NR_lookup_dcookie),
    /* the machine's, never an entry's: modules, kexec, swap, reboot, accounting, quotas, clock */
    ENTRY_DENY(__NR_init_module),
    ENTRY_DENY(__NR_finit_module),
    ENTRY_DENY(__NR_delete_module),
    ENTRY_DENY(__NR_kexec_load),
    ENTRY_DENY(__NR_kexec_file_load),
    ENTRY_DENY(__NR_swapon),
    ENTRY_DENY(__NR_swapoff),
    ENTRY_DENY(__NR_reboot),
    ENTRY_DENY(__NR_acct),
    ENTRY_DENY(__NR_quotactl),
    ENTRY_DENY(__NR_quotactl_fd),
    ENTRY_DENY(__NR_syslog),
    ENTRY_DENY(__NR_settimeofday),
    ENTRY_DENY(__NR_clock_settime),
    ENTRY_DENY(__NR_clock_adjtime),
    ENTRY_DENY(__NR_adjtimex),
    ENTRY_DENY(__NR_sethostname),
    ENTRY_DENY(__NR_setdomainname),
    ENTRY_DENY(__NR_vhangup),
#ifdef __NR_iopl
    ENTRY_DENY(__NR_iopl),
    ENTRY_DENY(__NR_ioperm),
#endif
#ifdef __NR_uselib
    ENTRY_DENY(__NR_uselib),
    ENTRY_DENY(__NR_ustat),
    ENTRY_DENY(__NR_sysfs),
    ENTRY_DENY(__NR__sysctl),
    ENTRY_DENY(__NR_create_module),
    ENTRY_DENY(__NR_get_kernel_syms),
    ENTRY_DENY(__NR_query_module),
    ENTRY_DENY(__NR_nfsservctl),
#endif
    ENTRY_RET(SECCOMP_RET_ALLOW),
};

/*
 * Install the filter on the calling task (the launcher's child, between
 * vfork and exec: the filter belongs to the task, not to the memory it
 * borrows). The launcher set no_new_privs at start (drop_capabilities), which
 * an unprivileged filter needs; it is set again here so this never depends on
 * that. 0, or -1 with errno.
 */
static int install_entry_filter(void) {
    struct sock_fprog prog = {(unsigned short)(sizeof entry_filter / sizeof entry_filter[0]),
                              (struct sock_filter *)entry_filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

#endif
