/* runner_client.c — the parent's side of ksearch-runner: write the job,
 * start the child in a private temp folder with the death signal set, drain
 * its result pipe (fd 3) and log under a wall-clock limit (pidfd + poll), and
 * classify how it ended. The child's own sandbox is in sandbox.c. */
#include "eval/eval.h"
#include "eval/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void parse_events(const char *text, ks_runner_outcome *o) {
  const char *p = text;
  while (p && *p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    json_t *ev = json_loadb(p, len, 0, NULL);
    p = nl ? nl + 1 : NULL;
    if (!ev)
      continue;
    const char *kind = json_string_value(json_object_get(ev, "event"));
    if (!kind) {
    } else if (!strcmp(kind, "loaded")) {
      o->loaded = true;
    } else if (!strcmp(kind, "done")) {
      o->done = true;
      o->in_flight = -1;
    } else if (!strcmp(kind, "workload_start")) {
      o->in_flight = (int)json_integer_value(json_object_get(ev, "index"));
    } else if (!strcmp(kind, "alloc_failed")) {
      int64_t b = json_integer_value(json_object_get(ev, "bytes"));
      if (b > o->alloc_failed_bytes)
        o->alloc_failed_bytes = b;
    } else if (!strcmp(kind, "sigsys")) {
      o->sigsys_nr = (int)json_integer_value(json_object_get(ev, "nr"));
    } else if (!strcmp(kind, "error")) {
      o->setup_code = (int)json_integer_value(json_object_get(ev, "code"));
      ks_strlcpy(o->setup_error,
                 json_string_value(json_object_get(ev, "message"))
                     ? json_string_value(json_object_get(ev, "message"))
                     : "",
                 sizeof o->setup_error);
    } else if (!strcmp(kind, "workload") && o->n_results < KS_MAX_WORKLOADS) {
      ks_wl_result *r = &o->results[o->n_results++];
      memset(r, 0, sizeof *r);
      r->ran = true;
      r->index = (int)json_integer_value(json_object_get(ev, "index"));
      r->correct = json_is_true(json_object_get(ev, "correct"));
      r->max_abs_err = json_number_value(json_object_get(ev, "max_abs_err"));
      r->max_rel_err = json_number_value(json_object_get(ev, "max_rel_err"));
      r->time_ns_median =
          json_number_value(json_object_get(ev, "time_ns_median"));
      r->time_ns_min = json_number_value(json_object_get(ev, "time_ns_min"));
      r->time_ns_iqr = json_number_value(json_object_get(ev, "time_ns_iqr"));
      r->reps = (int)json_integer_value(json_object_get(ev, "reps"));
      r->device_ns_median =
          json_number_value(json_object_get(ev, "device_ns_median"));
      r->device_ns_min =
          json_number_value(json_object_get(ev, "device_ns_min"));
      const char *why = json_string_value(json_object_get(ev, "reason"));
      ks_strlcpy(r->reason, why ? why : "", sizeof r->reason);
    }
    json_decref(ev);
  }
}

ks_code ks_runner_exec(const ks_job *job, double timeout_s,
                       ks_runner_outcome *o, ks_err *err) {
  memset(o, 0, sizeof *o);
  o->in_flight = -1;
  o->sigsys_nr = -1;
  if (access(ks_runner_path(), X_OK) != 0)
    return ks_err_set(err, KS_ERR_ENV,
                      "%s: ksearch-runner not found or not executable; run "
                      "`make` or set KSEARCH_RUNNER",
                      ks_runner_path());
  char dir[] = "/tmp/ksearch-run-XXXXXX";
  if (!mkdtemp(dir))
    return ks_err_set(err, KS_ERR_IO, "mkdtemp: %s", strerror(errno));
  char job_path[sizeof dir + 16];
  snprintf(job_path, sizeof job_path, "%s/job.json", dir);
  json_t *jj = ks_job_to_json(job);
  char *text = json_dumps(jj, JSON_COMPACT);
  json_decref(jj);
  ks_code rc = ks_write_file_atomic(job_path, text, strlen(text), err);
  free(text);
  if (rc) {
    ks_rm_rf(dir);
    return rc;
  }
  int res[2], log[2];
  if (pipe2(res, O_CLOEXEC) || pipe2(log, O_CLOEXEC)) {
    ks_rm_rf(dir);
    return ks_err_set(err, KS_ERR_IO, "pipe: %s", strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    ks_rm_rf(dir);
    return ks_err_set(err, KS_ERR_ENV, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (chdir(dir) != 0)
      _exit(126);
    setenv("TMPDIR", dir, 1);
    char threads[16];
    snprintf(threads, sizeof threads, "%d", job->threads);
    setenv("OMP_NUM_THREADS", threads, 1);
    /* Spinning OpenMP workers stall whole parallel regions for a scheduler
     * time slice whenever another process holds a core (seen here: 12 ms
     * instead of 0.15 ms on a busy 2-core machine). Sleeping workers cost a
     * few microseconds of wake-up instead. A user's own setting wins. */
    setenv("OMP_WAIT_POLICY", "passive", 0);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(log[1], 1);
    dup2(log[1], 2);
    dup2(res[1], KS_RESULT_FD); /* dup2 clears O_CLOEXEC on the copy */
#ifdef SYS_close_range
    syscall(SYS_close_range, KS_RESULT_FD + 1, ~0U, 0);
#endif
    char *argv[] = {(char *)ks_runner_path(), job_path, NULL};
    execv(argv[0], argv);
    _exit(127);
  }
  close(res[1]);
  close(log[1]);
  ks_buf rbuf;
  ks_buf_init(&rbuf);
  ks_buf_init(&o->log);
  int fds[2] = {res[0], log[0]};
  ks_buf *bufs[2] = {&rbuf, &o->log};
  rc = ks_proc_drain(pid, fds, bufs, 2, 1 << 20, timeout_s, &o->proc, err);
  close(res[0]);
  close(log[0]);
  if (rbuf.data)
    parse_events(rbuf.data, o);
  ks_buf_free(&rbuf);
  ks_rm_rf(dir);
  return rc;
}

void ks_runner_outcome_free(ks_runner_outcome *o) { ks_buf_free(&o->log); }

ks_eval_status ks_runner_classify(const ks_task *task, const ks_job *job,
                                  const ks_runner_outcome *o, double timeout_s,
                                  char *reason, size_t n) {
  char where[300] = "";
  if (o->in_flight >= 0 && o->in_flight < task->n_workloads) {
    char wl[256];
    ks_workload_format(task, &task->workloads[o->in_flight], wl, sizeof wl);
    snprintf(where, sizeof where, " (workload %s)", wl);
  }
  if (o->sigsys_nr >= 0 || (!o->proc.exited && o->proc.signal == SIGSYS)) {
    /* no report: the call was made with signals blocked, as glibc does
     * around clone3 in pthread_create and posix_spawn */
    char name[64] = "clone3 or another call made with signals blocked";
    if (o->sigsys_nr >= 0)
      ks_syscall_name(o->sigsys_nr, name, sizeof name);
    snprintf(reason, n,
             "forbidden system call: %s%s; the sandbox allows no processes, "
             "threads, sockets or file writes",
             name, where);
    return KS_EVAL_REJECTED;
  }
  if (o->proc.timed_out) {
    snprintf(reason, n, "exceeded the wall-clock time limit of %.1f s%s",
             timeout_s, where);
    return KS_EVAL_TIMEOUT;
  }
  if (!o->proc.exited && o->proc.signal == SIGXCPU) {
    snprintf(reason, n, "exceeded the CPU time limit of %.0f s%s",
             job->cpu_limit_s, where);
    return KS_EVAL_TIMEOUT;
  }
  bool any_wrong = false;
  for (int i = 0; i < o->n_results; i++)
    any_wrong |= !o->results[i].correct;
  bool clean = o->done && o->proc.exited && o->proc.exit_status == 0;
  if (o->alloc_failed_bytes > 0 && (!clean || any_wrong)) {
    snprintf(reason, n,
             "out of memory: an allocation of %.2f GiB failed under the "
             "memory limit of %.2f GiB%s",
             (double)o->alloc_failed_bytes / (1 << 30),
             (double)job->mem_limit_bytes / (1 << 30), where);
    return KS_EVAL_OOM;
  }
  if (!o->proc.exited) {
    if (o->proc.signal == SIGKILL) {
      snprintf(reason, n,
               "killed by SIGKILL%s (the kernel's out-of-memory "
               "killer?)",
               where);
      return KS_EVAL_OOM;
    }
    const char *sig = sigabbrev_np(o->proc.signal);
    snprintf(reason, n, "crashed: killed by SIG%s%s", sig ? sig : "?", where);
    return KS_EVAL_CRASH;
  }
  if (o->setup_error[0]) {
    snprintf(reason, n, "%s", o->setup_error);
    return o->setup_code == KS_ERR_CANDIDATE ? KS_EVAL_COMPILE_ERROR
                                             : KS_EVAL_CRASH;
  }
  if (!clean) {
    snprintf(reason, n, "exited with status %d before finishing%s",
             o->proc.exit_status, where);
    return KS_EVAL_CRASH;
  }
  for (int i = 0; i < o->n_results; i++)
    if (!o->results[i].correct) {
      char wl[256];
      ks_workload_format(task, &task->workloads[o->results[i].index], wl,
                         sizeof wl);
      snprintf(reason, n, "incorrect on %s: %s", wl, o->results[i].reason);
      return KS_EVAL_INCORRECT;
    }
  reason[0] = 0;
  return KS_EVAL_OK;
}
