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
 * threads, sockets and signals to other processes are forbidden. */
ks_code ks_sandbox_seccomp(int report_fd, ks_err *err);
/* Name of a system call number on this architecture ("clone"). */
const char *ks_syscall_name(int nr, char *buf, size_t n);

#endif
