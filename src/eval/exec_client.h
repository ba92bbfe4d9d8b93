/* exec_client.h — the judge's end of one executor (DESIGN.md: Evaluation).
 *
 * Starts ksearch-runner (or any executor speaking exec_proto.h) in its own
 * process group with a private temp folder, the death signal and the two
 * memfds; sends commands one at a time and waits for the one answer each
 * deserves, timing every exchange with the judge's own clock; drains the
 * executor's log; kills it at the wall-clock deadline; and freezes it
 * (SIGSTOP) while the judge reads the output memfd, so that nothing the
 * candidate left running can change an output under the judge's eyes.
 * Anything off-protocol ends the executor and is recorded as a violation.
 */
#ifndef KS_EXEC_CLIENT_H
#define KS_EXEC_CLIENT_H

#include "eval/exec_proto.h"
#include "util/util.h"

typedef struct ks_exec {
  pid_t pid;
  int pidfd, cmd_fd, ev_fd, log_fd;
  char tmpdir[64];
  double deadline;      /* ks_now() seconds */
  bool dead, timed_out; /* dead: exited (or killed) and reaped */
  ks_proc_result proc;
  char violation[600];  /* non-empty: protocol violation, executor killed */
  int64_t alloc_failed; /* largest failed allocation reported */
  int sigsys_nr;        /* -1 none */
  char fault[256];      /* a fault event's text */
  int setup_code;       /* error event before ready: its code */
  char setup_error[1024];
  bool ready, loaded;
  double run_timeout_s; /* the deadline from "ready" on */
  int64_t next_id;
  ks_buf log;
  char rb[2 * KS_EXEC_MAX_LINE + 2]; /* event bytes not yet parsed */
  size_t rb_len;
  bool ev_eof;
} ks_exec;

/* Starts an executor with the job (one JSON line, sent first on its command
 * pipe), in_fd/out_fd as its fds 5 and 6, and a wall-clock limit that counts
 * from "ready" (its start, until then, has the same limit here). Waits for
 * "ready". KS_OK when it started (x->ready tells whether it got there;
 * otherwise the outcome fields say why); an error only when ksearch itself
 * could not start it. */
ks_code ks_exec_start(ks_exec *x, const char *job_json, int in_fd, int out_fd,
                      int threads, double timeout_s, ks_err *err);
/* The same with another executor program: argv (NULL-terminated, argv[0]
 * looked up on PATH when it has no slash) in place of ksearch-runner; NULL
 * means ksearch-runner. spin: its OpenMP workers wait spinning
 * (OMP_WAIT_POLICY=active) instead of sleeping, for host executors that the
 * judge freezes whenever it is not talking to them. */
/* start_timeout_s bounds the start (spawn to "ready": imports, an MLX
 * executor's JIT compiles and warm-up, which are no candidate call); the
 * wall-clock limit timeout_s then counts from "ready". */
ks_code ks_exec_start_argv(ks_exec *x, char *const *argv, const char *job_json,
                           int in_fd, int out_fd, int threads, bool spin,
                           double start_timeout_s, double timeout_s,
                           ks_err *err);
/* Sends one command (a JSON object without "id"; the client adds the next
 * id) and waits for the answer of kind `expect` with that id. *ev gets it;
 * *window_ns the judge's time from the send to the answer. false when the
 * executor died, timed out, or broke the protocol (the fields say which). */
bool ks_exec_ask(ks_exec *x, const char *cmd_fields, ks_exec_ev_kind expect,
                 ks_exec_event *ev, int64_t *window_ns);
/* Stops every thread of the executor and waits until it is stopped; false
 * when it died instead. ks_exec_thaw lets it go on. */
bool ks_exec_freeze(ks_exec *x);
void ks_exec_thaw(ks_exec *x);
/* Asks it to exit, waits briefly, kills the group, reaps, removes the temp
 * folder. Safe to call twice. */
void ks_exec_stop(ks_exec *x);
/* Records a violation found by the judge itself (claims that do not fit)
 * and kills the executor. */
void ks_exec_violate(ks_exec *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ks_exec_free(ks_exec *x);

#endif
