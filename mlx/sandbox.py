"""sandbox.py: closes the MLX executor's sandbox (DESIGN.md: Evaluation,
Sandbox; the C executor's is src/eval/sandbox.c).

Called once MLX has set up its device, so that what stays allowed is only
what a running Python + MLX needs: no new privileges, not dumpable, every
capability dropped, rlimits (address space counted from what is mapped now,
CPU, no core, no new processes, 64 MiB files), and a seccomp allow-list
loaded through libseccomp by ctypes with TSYNC (every thread MLX started is
covered). A call outside the list kills the process (SIGSYS: the judge says
"forbidden system call"); opening or stat-ing a path fails with EACCES
instead (Python's own lazy reads, a traceback's source lines, must not end
an evaluation), so nothing can be opened at all. W^X as in sandbox.c: no
mapping both writable and executable, none made executable later. On a GPU
(MLX CUDA), ioctl stays allowed on the /dev/nvidia* descriptors open now
(CUDA graphs and the memory pool need it; seen on the H200) and the poll
family (driver threads). Landlock is not used: with no open at all there is
nothing for it to narrow.

Diagnostics (never for untrusted candidates): KSEARCH_SANDBOX_AUDIT set makes
every forbidden call fail with EPERM instead of ending the executor (Python
cannot name the call from a SIGSYS handler, so nothing is written there);
KSEARCH_MLX_SANDBOX_ALLOW=name,... allows more calls by name (what a driver
turned out to need).
"""

import ctypes
import ctypes.util
import os
import resource

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_FLTATR_CTL_TSYNC = 4
SCMP_CMP_NE, SCMP_CMP_EQ, SCMP_CMP_MASKED_EQ = 1, 4, 7
EACCES = 13
PROT_WRITE, PROT_EXEC = 2, 4
SIGSYS, TCGETS = 31, 0x5401

ALLOW = """read write readv writev pread64 pwrite64 lseek close fstat munmap
mremap madvise brk futex sched_yield sched_getaffinity getpid gettid getuid
geteuid getgid getegid clock_gettime clock_getres clock_nanosleep nanosleep
gettimeofday exit exit_group rt_sigreturn rt_sigprocmask restart_syscall
getrandom set_robust_list rseq membarrier getrusage times sysinfo fcntl
get_mempolicy sched_getparam sched_getscheduler uname getcwd prlimit64
futex_waitv sigaltstack select pselect6 poll ppoll epoll_wait epoll_pwait
dup""".split()
# path lookups: refused politely (EACCES), never performed
PATHS = "open openat openat2 stat lstat newfstatat statx access faccessat faccessat2 readlink readlinkat".split()


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def _nvidia_fds():
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("/dev/nvidia"):
                fds.append(int(name))
        except OSError:
            pass
    return fds


def close(mem_limit, cpu_limit, gpu):
    """Closes the sandbox; None, or why it could not."""
    lib = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        sc = ctypes.CDLL(lib, use_errno=True)
    except OSError as e:
        return f"libseccomp not found ({e}); install libseccomp2"
    libc = ctypes.CDLL(None, use_errno=True)
    sc.seccomp_init.restype = ctypes.c_void_p
    sc.seccomp_init.argtypes = [ctypes.c_uint32]
    sc.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                          ctypes.c_uint, ctypes.POINTER(ArgCmp)]
    sc.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    sc.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    sc.seccomp_load.argtypes = [ctypes.c_void_p]
    sc.seccomp_release.argtypes = [ctypes.c_void_p]
    nv = _nvidia_fds() if gpu else []
    # the address space counts from what MLX and the driver reserved already
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return "prctl(PR_SET_NO_NEW_PRIVS) failed"
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (ctypes.c_uint32 * 6)()
    if libc.capset(hdr, data) != 0:
        return f"capset failed: {os.strerror(ctypes.get_errno())}"
    try:
        if mem_limit > 0:
            lim = mem_limit + mapped
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        if cpu_limit > 0:
            c = int(cpu_limit) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (c, c))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    except (ValueError, OSError) as e:
        return f"setrlimit: {e}"
    audit = bool(os.environ.get("KSEARCH_SANDBOX_AUDIT"))
    extra = [n for n in os.environ.get("KSEARCH_MLX_SANDBOX_ALLOW", "").split(",") if n]
    ctx = sc.seccomp_init(0x00050000 | 1 if audit else SCMP_ACT_KILL_PROCESS)
    if not ctx:
        return "seccomp_init failed"

    def rule(action, name, *cmps):
        nr = sc.seccomp_syscall_resolve_name(name.encode())
        if nr < 0:
            return 0  # not on this architecture
        arr = (ArgCmp * max(len(cmps), 1))(*[ArgCmp(*c) for c in cmps])
        return sc.seccomp_rule_add_array(ctx, action, nr, len(cmps), arr)

    rc = 0
    for name in ALLOW + extra:
        rc = rc or rule(SCMP_ACT_ALLOW, name)
    for name in PATHS:
        rc = rc or rule(0x00050000 | EACCES, name)  # SCMP_ACT_ERRNO(EACCES)
    me = os.getpid()
    rc = rc or rule(SCMP_ACT_ALLOW, "rt_sigaction", (0, SCMP_CMP_NE, SIGSYS, 0))
    rc = rc or rule(SCMP_ACT_ALLOW, "tgkill", (0, SCMP_CMP_EQ, me, 0))
    rc = rc or rule(SCMP_ACT_ALLOW, "kill", (0, SCMP_CMP_EQ, me, 0))
    rc = rc or rule(SCMP_ACT_ALLOW, "mmap", (2, SCMP_CMP_MASKED_EQ, PROT_WRITE, 0))
    rc = rc or rule(SCMP_ACT_ALLOW, "mmap", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0))
    rc = rc or rule(SCMP_ACT_ALLOW, "mprotect", (2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0))
    rc = rc or rule(SCMP_ACT_ALLOW, "ioctl", (1, SCMP_CMP_EQ, TCGETS, 0))
    for fd in nv:
        rc = rc or rule(SCMP_ACT_ALLOW, "ioctl", (0, SCMP_CMP_EQ, fd, 0))
    rc = rc or sc.seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)
    rc = rc or sc.seccomp_load(ctx)
    sc.seccomp_release(ctx)
    if rc:
        return f"seccomp filter: {os.strerror(-rc)}"
    return None
