/* sandbox.c — see sandbox.h.
 *
 * The allow-list is what a compute kernel and the OpenMP runtime need once
 * their thread pool exists: memory management, futexes, clocks, reads and
 * writes on descriptors that are already open, read-only opens, and signals
 * to itself (abort). Everything else traps (SIGSYS), and the handler reports
 * the call number on the result pipe so that the parent can record "forbidden
 * system call: clone" rather than a bare crash. The handler cannot be
 * replaced: rt_sigaction on SIGSYS is itself forbidden.
 */
#include "eval/sandbox.h"
#include "backend/backend.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <ucontext.h>
#include <unistd.h>

static int g_report_fd = -1; /* read by the signal handler only */
static int g_audit_fd = -1;  /* KSEARCH_SANDBOX_AUDIT: log and go on */

/* Audit mode: note the call number, make the call fail with EPERM and let
 * the program go on (x86-64: the return value register). */
static bool audit_call(siginfo_t *info, void *uctx) {
#if defined(__x86_64__)
  if (g_audit_fd < 0)
    return false;
  char line[32];
  int n = 0, nr = info->si_syscall;
  char digits[16];
  int d = 0;
  do {
    digits[d++] = (char)('0' + nr % 10);
    nr /= 10;
  } while (nr > 0 && d < 15);
  while (d > 0)
    line[n++] = digits[--d];
  line[n++] = '\n';
  if (write(g_audit_fd, line, (size_t)n) < 0) {
  }
  ((ucontext_t *)uctx)->uc_mcontext.gregs[REG_RAX] = -EPERM;
  return true;
#else
  (void)info;
  (void)uctx;
  return false;
#endif
}

static void on_sigsys(int sig, siginfo_t *info, void *uctx) {
  (void)sig;
  if (audit_call(info, uctx))
    return;
  if (g_report_fd >= 0)
    ks_write_event_u64(g_report_fd, "{\"ev\":\"sigsys\",\"nr\":",
                       (uint64_t)(info->si_syscall > 0 ? info->si_syscall : 0));
  _exit(KS_SANDBOX_SIGSYS_EXIT);
}

ks_code ks_sandbox_limits(int64_t mem_bytes, double cpu_s, ks_err *err) {
  struct rlimit r;
#ifndef __SANITIZE_ADDRESS__
  if (mem_bytes > 0) {
    r.rlim_cur = r.rlim_max = (rlim_t)mem_bytes;
    if (setrlimit(RLIMIT_AS, &r) != 0)
      return ks_err_set(err, KS_ERR_ENV, "setrlimit(RLIMIT_AS): %s",
                        strerror(errno));
  }
#else
  (void)mem_bytes;
#endif
  if (cpu_s > 0) {
    r.rlim_cur = (rlim_t)(cpu_s + 1);
    r.rlim_max = r.rlim_cur + 2;
    if (setrlimit(RLIMIT_CPU, &r) != 0)
      return ks_err_set(err, KS_ERR_ENV, "setrlimit(RLIMIT_CPU): %s",
                        strerror(errno));
  }
  r.rlim_cur = r.rlim_max = 0;
  setrlimit(RLIMIT_CORE, &r);
  setrlimit(RLIMIT_NPROC, &r); /* root ignores it; seccomp covers that */
  /* files are written only through descriptors opened before the filter
   * (the reference's outputs): no larger than what memory holds */
  r.rlim_cur = r.rlim_max =
      mem_bytes > (64 << 20) ? (rlim_t)mem_bytes : (rlim_t)64 << 20;
  setrlimit(RLIMIT_FSIZE, &r);
  return KS_OK;
}

ks_code ks_sandbox_seccomp(int report_fd, bool allow_open,
                           const ks_backend_i *be, void *handle, ks_err *err) {
  g_report_fd = report_fd;
  const char *audit = getenv("KSEARCH_SANDBOX_AUDIT");
  if (audit && *audit)
    g_audit_fd = open(audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, NULL) != 0)
    return ks_err_set(err, KS_ERR_ENV, "sigaction(SIGSYS): %s",
                      strerror(errno));

  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
  if (!ctx)
    return ks_err_set(err, KS_ERR_ENV, "seccomp_init failed");
  static const char *const allow[] = {
      "read",
      "write",
      "readv",
      "writev",
      "pread64",
      "pwrite64",
      "lseek",
      "close",
      "fstat",
      "newfstatat",
      "statx",
      "munmap",
      "mremap",
      "madvise",
      "brk",
      "futex",
      "sched_yield",
      "sched_getaffinity",
      "getpid",
      "gettid",
      "getuid",
      "geteuid",
      "clock_gettime",
      "clock_getres",
      "clock_nanosleep",
      "nanosleep",
      "gettimeofday",
      "exit",
      "exit_group",
      "rt_sigreturn",
      "rt_sigprocmask",
      "restart_syscall",
      "getrandom",
      "set_robust_list",
      "rseq",
      "membarrier",
      "getrusage",
      "times",
      "sysinfo",
      "fcntl",
      "get_mempolicy",
      "sched_getparam",
      "sched_getscheduler",
      "uname",
      "getcwd",
      "readlink",
      "access",
      "faccessat",
      "faccessat2",
      "prlimit64",
      "futex_waitv",
      "sigaltstack",
  };
  int rc = 0;
  for (size_t i = 0; i < sizeof allow / sizeof *allow && !rc; i++) {
    int nr = seccomp_syscall_resolve_name(allow[i]);
    if (nr == __NR_SCMP_ERROR)
      continue; /* not on this architecture */
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
  }
  /* signal handlers for anything but SIGSYS */
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1,
                          SCMP_A0(SCMP_CMP_NE, SIGSYS));
  /* signals to itself only (abort, raise) */
  pid_t me = getpid();
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                          SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)me));
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
                          SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)me));
  /* files: read-only opens only, and only where Landlock confines them */
  scmp_datum_t wmask = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
  if (!rc && allow_open)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, wmask, 0));
  if (!rc && allow_open)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
                          SCMP_A1(SCMP_CMP_MASKED_EQ, wmask, 0));
  /* W^X: no mapping both writable and executable, and none made executable
   * later, so neither the executor's code nor a loaded library can be
   * rewritten in place (dlopen maps code with mmap, never mprotect) */
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE, 0));
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  /* stdio asks whether stdout is a terminal */
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
                          SCMP_A1(SCMP_CMP_EQ, TCGETS));
  /* Every thread, not only this one: the OpenMP pool and an OpenCL
   * driver's workers (PoCL runs kernels on its own threads) exist before the
   * filter is installed, and without TSYNC a filter covers only the calling
   * thread and its future children, so code running on those workers would
   * be unconfined. */
  /* the device driver's own needs, on what it already opened */
  ks_err herr;
  if (!rc && be && handle && be->sandbox_rules &&
      be->sandbox_rules(handle, ctx, &herr)) {
    seccomp_release(ctx);
    *err = herr;
    return herr.code;
  }
  if (!rc)
    rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  if (!rc)
    rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc)
    return ks_err_set(err, KS_ERR_ENV, "seccomp filter: %s", strerror(-rc));
  return KS_OK;
}

int ks_landlock_abi(void) {
#ifdef SYS_landlock_create_ruleset
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
                     LANDLOCK_CREATE_RULESET_VERSION);
  return abi > 0 ? (int)abi : 0;
#else
  return 0;
#endif
}

#ifdef SYS_landlock_create_ruleset
static int ll_allow(int ruleset, const char *path, uint64_t access,
                    bool dir_ok) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return 0; /* a folder this system lacks: nothing to allow */
  struct stat st;
  if (fstat(fd, &st) != 0 || (!dir_ok && S_ISDIR(st.st_mode))) {
    close(fd);
    return 0;
  }
  if (!S_ISDIR(st.st_mode)) /* files take only file rights */
    access &= LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE;
  struct landlock_path_beneath_attr pb = {.allowed_access = access,
                                          .parent_fd = fd};
  int rc = (int)syscall(SYS_landlock_add_rule, ruleset,
                        LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
  close(fd);
  return rc;
}
#endif

ks_code ks_landlock_restrict(const char *read_path, ks_err *err) {
#ifdef SYS_landlock_create_ruleset
  int abi = ks_landlock_abi();
  if (abi < 1)
    return ks_err_set(err, KS_ERR_ENV, "Landlock is not available");
  /* every right this ABI knows is handled, so anything not granted below
   * is denied: writes, creation, removal, truncation, device ioctls */
  uint64_t handled =
      LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
      LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
      LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
      LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
      LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
      LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2)
    handled |= LANDLOCK_ACCESS_FS_REFER;
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
  if (abi >= 3)
    handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
#endif
  struct landlock_ruleset_attr attr = {.handled_access_fs = handled};
  int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (rs < 0)
    return ks_err_set(err, KS_ERR_ENV, "landlock_create_ruleset: %s",
                      strerror(errno));
  uint64_t rx = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
                LANDLOCK_ACCESS_FS_EXECUTE;
  /* the runtime's libraries (dlopen of a C artifact resolves nothing new,
   * but PoCL maps its kernels' code from its private folder, read_path's
   * sibling for device runs) */
  static const char *const sys[] = {"/usr/lib", "/usr/lib64", "/lib", "/lib64",
                                    "/etc/ld.so.cache"};
  int rc = 0;
  for (size_t i = 0; i < sizeof sys / sizeof *sys && !rc; i++)
    rc = ll_allow(rs, sys[i], rx, true);
  if (!rc && read_path && *read_path)
    rc = ll_allow(rs, read_path, rx, true);
  const char *tmp = getenv("TMPDIR"); /* the executor's private folder */
  if (!rc && tmp && !strncmp(tmp, "/tmp/ksearch-run-", 17))
    rc = ll_allow(rs, tmp, rx, true);
  if (!rc && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    rc = -1;
  if (!rc)
    rc = (int)syscall(SYS_landlock_restrict_self, rs, 0);
  int e = errno;
  close(rs);
  if (rc)
    return ks_err_set(err, KS_ERR_ENV, "Landlock: %s", strerror(e));
  return KS_OK;
#else
  (void)read_path;
  return ks_err_set(err, KS_ERR_ENV, "Landlock is not available");
#endif
}

/* Every capability of every set, so that a root executor is an ordinary
 * process: no ptrace of the judge, no /proc/<judge>/mem, no raw I/O. */
static ks_code drop_capabilities(ks_err *err) {
  for (int c = 0; c <= 63; c++)
    prctl(PR_CAPBSET_DROP, c, 0, 0, 0); /* EINVAL past the last: fine */
  struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3,
                                       .pid = 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof d);
  if (syscall(SYS_capset, &h, d) != 0)
    return ks_err_set(err, KS_ERR_ENV, "capset: %s", strerror(errno));
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  return KS_OK;
}

ks_code ks_sandbox_close(const ks_sandbox_plan *p, ks_err *err) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return ks_err_set(err, KS_ERR_ENV, "PR_SET_NO_NEW_PRIVS: %s",
                      strerror(errno));
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ks_code rc = drop_capabilities(err);
  if (!rc)
    rc = ks_sandbox_limits(p->mem_bytes, p->cpu_s, err);
  if (!rc && p->landlock)
    rc = ks_landlock_restrict(p->read_path, err);
  if (!rc)
    rc = ks_sandbox_seccomp(p->report_fd, p->landlock, p->be, p->handle, err);
  return rc;
}

const char *ks_syscall_name(int nr, char *buf, size_t n) {
  char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  if (name) {
    ks_strlcpy(buf, name, n);
    free(name);
  } else {
    snprintf(buf, n, "#%d", nr);
  }
  return buf;
}

int ks_sandbox_device_fds(const char *prefix, int *fds, int max) {
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return 0;
  int n = 0;
  size_t plen = strlen(prefix);
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    char p[64], target[256];
    snprintf(p, sizeof p, "/proc/self/fd/%.20s", e->d_name);
    ssize_t len = readlink(p, target, sizeof target - 1);
    if (len <= 0)
      continue;
    target[len] = 0;
    if (!strncmp(target, prefix, plen))
      fds[n++] = atoi(e->d_name);
  }
  closedir(d);
  return n;
}

ks_code ks_sandbox_allow_driver(void *scmp_ctx, const int *fds, int n,
                                const char *extra, ks_err *err) {
  scmp_filter_ctx ctx = scmp_ctx;
  static const char *const allow[] = {"poll", "ppoll", "epoll_wait",
                                      "epoll_pwait", "epoll_pwait2"};
  int rc = 0;
  for (size_t i = 0; i < sizeof allow / sizeof *allow && !rc; i++) {
    int nr = seccomp_syscall_resolve_name(allow[i]);
    if (nr != __NR_SCMP_ERROR)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
  }
  for (const char *p = extra; !rc && p && *p;) {
    char *end;
    long nr = strtol(p, &end, 10);
    if (end == p)
      break;
    /* ioctl: allowed below, on the driver's descriptors only */
    if (nr != SCMP_SYS(ioctl) && nr >= 0 && nr < 1024)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, (int)nr, 0);
    p = *end == ',' ? end + 1 : end;
  }
  for (int i = 0; !rc && i < n; i++)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
                          SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fds[i]));
  if (rc)
    return ks_err_set(err, KS_ERR_ENV, "device driver sandbox rules: %s",
                      strerror(-rc));
  return KS_OK;
}
