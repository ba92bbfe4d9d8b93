/* sandbox.h — the runner's confinement, installed after the candidate is
 * loaded (DESIGN.md: Evaluation): resource limits, a seccomp allow-list that
 * traps every other system call, and a SIGSYS handler that reports the
 * forbidden call to the parent before the runner exits. */
#ifndef KS_SANDBOX_H
#define KS_SANDBOX_H

#include "ksearch.h"

/* Exit status of a runner that made a forbidden system call. */
#define KS_SANDBOX_SIGSYS_EXIT 99

/* Memory (address space), CPU seconds, no core files, no new processes, no
 * new files beyond the few already open. */
ks_code ks_sandbox_limits(int64_t mem_bytes, double cpu_s, ks_err *err);
/* Installs the SIGSYS reporter (writing to report_fd) and the seccomp
 * filter. After this, opening files for writing, creating processes or
 * threads, sockets and signals to other processes are forbidden; memory
 * is never writable and executable at once, and no mapping becomes
 * executable through mprotect (W^X: code cannot be rewritten in place).
 * allow_open: read-only opens stay allowed (only with Landlock, which
 * limits them to the paths the runtime needs); otherwise none. A device
 * backend (be, with its loaded handle; both may be NULL) adds its driver's
 * needs through its sandbox_rules hook just before the filter loads.
 * KSEARCH_SANDBOX_AUDIT=FILE (a diagnostic, never for candidates one does
 * not trust): forbidden calls fail with EPERM instead of ending the
 * executor, and each one's number is appended to FILE, to find what a
 * driver needs. */
struct ks_backend_i;
ks_code ks_sandbox_seccomp(int report_fd, bool allow_open,
                           const struct ks_backend_i *be, void *handle,
                           ks_err *err);
/* Whether this kernel has Landlock (ABI >= 1), asked without side effects. */
int ks_landlock_abi(void);
/* Restricts the file system to reading (and mapping for execution) the
 * system's library folders and read_path (a file or folder), and nothing
 * else at all: no cache, no run folder, no task folder, no /proc. */
ks_code ks_landlock_restrict(const char *read_path, ks_err *err);

/* Everything an executor does to close its sandbox, in order: no new
 * privileges, every capability dropped (so /proc/<judge>/mem is out of
 * reach of a root executor), rlimits, Landlock when asked, seccomp. */
typedef struct ks_sandbox_plan {
  int64_t mem_bytes;
  double cpu_s;
  int report_fd;
  bool landlock;                 /* the judge found Landlock and asks for it */
  const char *read_path;         /* what stays readable under Landlock */
  const struct ks_backend_i *be; /* device hooks; may be NULL */
  void *handle;
} ks_sandbox_plan;
ks_code ks_sandbox_close(const ks_sandbox_plan *p, ks_err *err);
/* Name of a system call number on this architecture ("clone"). */
const char *ks_syscall_name(int nr, char *buf, size_t n);

/* GPU drivers under the filter (cuda, and OpenCL on a GPU): the descriptors
 * this process holds open on paths starting with `prefix` ("/dev/nvidia"),
 * read at load time, before Landlock hides /proc (at most max; returns how
 * many); then, from a backend's sandbox_rules, the poll family the
 * driver's helper threads wait in and ioctl on exactly those descriptors.
 * `extra`: more syscall numbers, comma-separated (an audit's findings,
 * KSEARCH_CUDA_SANDBOX_ALLOW), ioctl never among them. */
int ks_sandbox_device_fds(const char *prefix, int *fds, int max);
ks_code ks_sandbox_allow_driver(void *scmp_ctx, const int *fds, int n,
                                const char *extra, ks_err *err);

#endif
