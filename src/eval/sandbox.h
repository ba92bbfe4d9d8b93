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
 * threads, sockets and signals to other processes are forbidden. A device
 * backend (be, with its loaded handle; both may be NULL) adds its driver's
 * needs through its sandbox_rules hook just before the filter loads.
 * KSEARCH_SANDBOX_AUDIT=FILE (a diagnostic, never for candidates one does
 * not trust): forbidden calls fail with EPERM instead of ending the runner,
 * and each one's number is appended to FILE, to find what a driver needs. */
struct ks_backend_i;
ks_code ks_sandbox_seccomp(int report_fd, const struct ks_backend_i *be,
                           void *handle, ks_err *err);
/* Name of a system call number on this architecture ("clone"). */
const char *ks_syscall_name(int nr, char *buf, size_t n);

#endif
