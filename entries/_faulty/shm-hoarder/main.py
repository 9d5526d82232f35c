"""Holds 1 GB through detached SysV shm segments (they outlive the process in
the game's IPC namespace). Exit 45: a segment was refused (the limit held);
printing "HELD" instead of a move: the sandbox let it pin it all (bad_output)."""

import ctypes
import sys

IPC_PRIVATE, IPC_CREAT = 0, 0o1000
SEGMENT = 64 << 20
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
sys.stdin.read()
for _ in range((1 << 30) // SEGMENT):
    shmid = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(SEGMENT), IPC_CREAT | 0o600)
    if shmid < 0:
        sys.stderr.write(f"shmget refused: errno {ctypes.get_errno()}\n")
        sys.exit(45)
    addr = libc.shmat(shmid, None, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        sys.stderr.write(f"shmat refused: errno {ctypes.get_errno()}\n")
        sys.exit(45)
    ctypes.memset(addr, 1, SEGMENT)  # every page charged now
    libc.shmdt(ctypes.c_void_p(addr))  # mapped by nobody from here on
print("HELD 1 GB in shm")
