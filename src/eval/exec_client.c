/* exec_client.c — see exec_client.h. The judge's clock is ks_now_ns() taken
 * around each exchange; the executor's own figures are only claims. */
#include "eval/exec_client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_CAP (1u << 20)

/* Executors' private folders are /tmp/ksearch-run-<judge pid>-XXXXXX. A
 * judge killed by SIGKILL cannot remove its own (its executors die with it,
 * PR_SET_PDEATHSIG), so each executor start removes those of this user whose
 * judge process is gone (kill(pid, 0) says ESRCH). Live judges' folders,
 * another user's, links and the old unnumbered form are left alone. */
static void sweep_dead_tmpdirs(void) {
  DIR *d = opendir("/tmp");
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    int pid = 0, n = 0;
    if (sscanf(e->d_name, "ksearch-run-%d-%n", &pid, &n) != 1 || n == 0 ||
        pid <= 0 || pid == (int)getpid())
      continue;
    if (kill(pid, 0) == 0 || errno != ESRCH)
      continue;
    char path[300];
    struct stat st;
    snprintf(path, sizeof path, "/tmp/%s", e->d_name);
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
      ks_rm_rf(path);
  }
  closedir(d);
}

static void reap(ks_exec *x, bool block) {
  if (x->dead || x->pid <= 0)
    return;
  int st = 0;
  pid_t w = waitpid(x->pid, &st, block ? 0 : WNOHANG);
  if (w != x->pid)
    return;
  x->dead = true;
  if (WIFEXITED(st)) {
    x->proc.exited = 1;
    x->proc.exit_status = WEXITSTATUS(st);
  } else if (WIFSIGNALED(st)) {
    x->proc.signal = WTERMSIG(st);
  }
}

static void kill_group(ks_exec *x) {
  if (x->pid > 0 && !x->dead) {
    kill(-x->pid, SIGKILL);
    kill(x->pid, SIGKILL);
  }
}

void ks_exec_violate(ks_exec *x, const char *fmt, ...) {
  if (!x->violation[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->violation, sizeof x->violation, fmt, ap);
    va_end(ap);
  }
  kill_group(x);
  reap(x, true);
}

static void drain_log(ks_exec *x) {
  char tmp[65536];
  for (;;) {
    ssize_t r = read(x->log_fd, tmp, sizeof tmp);
    if (r <= 0)
      return;
    if (x->log.len < LOG_CAP)
      ks_buf_append(&x->log, tmp, (size_t)r);
  }
}

static void read_events(ks_exec *x) {
  while (!x->ev_eof && x->rb_len < sizeof x->rb - 1) {
    ssize_t r = read(x->ev_fd, x->rb + x->rb_len, sizeof x->rb - 1 - x->rb_len);
    if (r > 0)
      x->rb_len += (size_t)r;
    else if (r == 0)
      x->ev_eof = true;
    else
      return; /* EAGAIN */
  }
}

/* One complete line from the buffer: 1 got one, 0 none yet, -1 too long. */
static int take_line(ks_exec *x, char *out, size_t *len) {
  char *nl = memchr(x->rb, '\n', x->rb_len);
  if (!nl)
    return x->rb_len > KS_EXEC_MAX_LINE ? -1 : 0;
  size_t n = (size_t)(nl - x->rb);
  if (n > KS_EXEC_MAX_LINE)
    return -1;
  memcpy(out, x->rb, n);
  out[n] = 0;
  *len = n;
  memmove(x->rb, nl + 1, x->rb_len - n - 1);
  x->rb_len -= n + 1;
  return 1;
}

/* Records what may arrive at any time; true when ev was one of those. */
static bool async_event(ks_exec *x, const ks_exec_event *ev) {
  switch (ev->kind) {
  case KS_EV_ALLOC:
    if (ev->value > x->alloc_failed)
      x->alloc_failed = ev->value;
    return true;
  case KS_EV_SIGSYS: x->sigsys_nr = (int)ev->value; return true;
  case KS_EV_FAULT:
    ks_strlcpy(x->fault, ev->text, sizeof x->fault);
    return true;
  default: return false;
  }
}

/* Waits for the next event that is not an async report. false when the
 * executor died, timed out, or sent garbage. */
static bool next_event(ks_exec *x, ks_exec_event *ev) {
  char line[KS_EXEC_MAX_LINE + 1], why[300];
  size_t len;
  for (;;) {
    int got = take_line(x, line, &len);
    if (got < 0) {
      ks_exec_violate(x,
                      "protocol violation: an event line longer than %d "
                      "bytes",
                      KS_EXEC_MAX_LINE);
      return false;
    }
    if (got > 0) {
      if (!ks_exec_parse_event(line, len, ev, why, sizeof why)) {
        ks_exec_violate(x, "protocol violation: %s", why);
        return false;
      }
      if (async_event(x, ev))
        continue;
      return true;
    }
    if (x->ev_eof || x->dead) {
      reap(x, true);
      return false;
    }
    double left = x->deadline - ks_now();
    if (left <= 0) {
      x->timed_out = true;
      kill_group(x);
      reap(x, true);
      return false;
    }
    struct pollfd pf[3] = {{.fd = x->ev_fd, .events = POLLIN},
                           {.fd = x->log_fd, .events = POLLIN},
                           {.fd = x->pidfd, .events = POLLIN}};
    int ms = (int)(left * 1000) + 1;
    int r =
        poll(pf, x->pidfd >= 0 ? 3 : 2, ms > 200 && x->pidfd < 0 ? 200 : ms);
    if (r < 0 && errno != EINTR)
      return false;
    drain_log(x);
    read_events(x);
    if (x->pidfd >= 0 && (pf[2].revents & POLLIN)) {
      read_events(x); /* the last words before death */
      if (!memchr(x->rb, '\n', x->rb_len)) {
        reap(x, true);
        drain_log(x);
        return false;
      }
    }
    if (x->pidfd < 0)
      reap(x, false);
  }
}

ks_code ks_exec_start(ks_exec *x, const char *job_json, int in_fd, int out_fd,
                      int threads, double timeout_s, ks_err *err) {
  return ks_exec_start_argv(x, NULL, job_json, in_fd, out_fd, threads, false,
                            timeout_s, timeout_s, err);
}

ks_code ks_exec_start_argv(ks_exec *x, char *const *prog, const char *job_json,
                           int in_fd, int out_fd, int threads, bool spin,
                           double start_timeout_s, double timeout_s,
                           ks_err *err) {
  memset(x, 0, sizeof *x);
  x->pid = -1;
  x->pidfd = x->cmd_fd = x->ev_fd = x->log_fd = -1;
  x->sigsys_nr = -1;
  ks_buf_init(&x->log);
  x->run_timeout_s = timeout_s;
  x->deadline = ks_now() + start_timeout_s;
  /* the judge's memory holds every reference output: no process of the
   * same user may read it through /proc/<pid>/mem or ptrace */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (!prog && access(ks_runner_path(), X_OK) != 0)
    return ks_err_set(err, KS_ERR_ENV,
                      "%s: ksearch-runner not found or not executable; run "
                      "`make` or set KSEARCH_RUNNER",
                      ks_runner_path());
  sweep_dead_tmpdirs();
  snprintf(x->tmpdir, sizeof x->tmpdir, "/tmp/ksearch-run-%d-XXXXXX",
           (int)getpid());
  if (!mkdtemp(x->tmpdir))
    return ks_err_set(err, KS_ERR_IO, "mkdtemp: %s", strerror(errno));
  int ev[2], lg[2], cmd[2];
  if (pipe2(ev, O_CLOEXEC) || pipe2(lg, O_CLOEXEC) ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cmd)) {
    ks_rm_rf(x->tmpdir);
    return ks_err_set(err, KS_ERR_IO, "pipe: %s", strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    ks_rm_rf(x->tmpdir);
    return ks_err_set(err, KS_ERR_ENV, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (chdir(x->tmpdir) != 0)
      _exit(126);
    setenv("TMPDIR", x->tmpdir, 1);
    char th[16];
    snprintf(th, sizeof th, "%d", threads);
    setenv("OMP_NUM_THREADS", th, 1);
    /* a user's own setting wins (DESIGN.md: Evaluation, "One executor at
     * a time") */
    setenv("OMP_WAIT_POLICY", spin ? "active" : "passive", 0);
    int devnull = open("/dev/null", O_RDONLY);
    /* fds above 6 may be where the targets are: move sources out of the
     * way first, then place each */
    int src[5] = {fcntl(lg[1], F_DUPFD, 20), fcntl(ev[1], F_DUPFD, 20),
                  fcntl(cmd[1], F_DUPFD, 20), fcntl(in_fd, F_DUPFD, 20),
                  fcntl(out_fd, F_DUPFD, 20)};
    dup2(devnull, 0);
    dup2(src[0], 1);
    dup2(src[0], 2);
    dup2(src[1], KS_EXEC_EV_FD);
    dup2(src[2], KS_EXEC_CMD_FD);
    dup2(src[3], KS_EXEC_IN_FD);
    dup2(src[4], KS_EXEC_OUT_FD);
#ifdef SYS_close_range
    syscall(SYS_close_range, KS_EXEC_OUT_FD + 1, ~0U, 0);
#endif
    char *argv[] = {(char *)ks_runner_path(), NULL};
    if (prog)
      execvp(prog[0], prog);
    else
      execv(argv[0], argv);
    _exit(127);
  }
  close(ev[1]);
  close(lg[1]);
  close(cmd[1]);
  x->pid = pid;
  x->ev_fd = ev[0];
  x->log_fd = lg[0];
  x->cmd_fd = cmd[0];
  fcntl(x->ev_fd, F_SETFL, O_NONBLOCK);
  fcntl(x->log_fd, F_SETFL, O_NONBLOCK);
#ifdef SYS_pidfd_open
  x->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
  size_t n = strlen(job_json);
  ks_buf job;
  ks_buf_init(&job);
  ks_buf_append(&job, job_json, n);
  ks_buf_puts(&job, "\n");
  size_t put = 0;
  while (put < job.len) {
    ssize_t w = send(x->cmd_fd, job.data + put, job.len - put, MSG_NOSIGNAL);
    if (w <= 0)
      break; /* it died: next_event says how */
    put += (size_t)w;
  }
  ks_buf_free(&job);
  ks_exec_event e;
  while (next_event(x, &e)) {
    if (e.kind == KS_EV_ERROR) {
      x->setup_code = (int)e.value;
      ks_strlcpy(x->setup_error, e.text, sizeof x->setup_error);
      continue; /* it exits next */
    }
    if (e.kind == KS_EV_READY) {
      x->ready = true;
      x->deadline = ks_now() + x->run_timeout_s; /* the calls' limit */
      return KS_OK;
    }
    ks_exec_violate(x, "protocol violation: %s before ready",
                    ks_exec_ev_name(e.kind));
    return KS_OK;
  }
  return KS_OK;
}

bool ks_exec_ask(ks_exec *x, const char *cmd_fields, ks_exec_ev_kind expect,
                 ks_exec_event *ev, int64_t *window_ns) {
  if (x->dead || x->violation[0])
    return false;
  int64_t id = x->next_id++;
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "{%s,\"id\":%lld}\n", cmd_fields,
                   (long long)id);
  int64_t t0 = ks_now_ns();
  ssize_t w = send(x->cmd_fd, buf, (size_t)n, MSG_NOSIGNAL);
  if (w != n) {
    reap(x, true);
    return false;
  }
  for (;;) {
    if (!next_event(x, ev))
      return false;
    if (ev->kind == KS_EV_ERROR && !x->loaded) {
      x->setup_code = (int)ev->value;
      ks_strlcpy(x->setup_error, ev->text, sizeof x->setup_error);
      next_event(x, ev); /* it exits next */
      return false;
    }
    break;
  }
  int64_t t1 = ks_now_ns();
  bool has_id = expect != KS_EV_LOADED && expect != KS_EV_READY;
  if (ev->kind != expect || (has_id && ev->id != id)) {
    ks_exec_violate(x,
                    "protocol violation: %s%s%lld sent where %s %lld was "
                    "due",
                    ks_exec_ev_name(ev->kind), has_id ? " " : "",
                    has_id ? (long long)ev->id : 0LL, ks_exec_ev_name(expect),
                    (long long)id);
    return false;
  }
  if (expect == KS_EV_LOADED)
    x->loaded = true;
  if (window_ns)
    *window_ns = t1 - t0;
  /* an answer that arrived together with more lines: nothing may come
   * unasked */
  read_events(x);
  char *nl = memchr(x->rb, '\n', x->rb_len);
  if (nl) {
    char line[KS_EXEC_MAX_LINE + 1], why[300];
    size_t len = (size_t)(nl - x->rb);
    ks_exec_event extra;
    if (len <= KS_EXEC_MAX_LINE) {
      memcpy(line, x->rb, len);
      if (ks_exec_parse_event(line, len, &extra, why, sizeof why) &&
          (extra.kind == KS_EV_ALLOC || extra.kind == KS_EV_SIGSYS ||
           extra.kind == KS_EV_FAULT))
        return true; /* reported when read */
    }
    ks_exec_violate(x, "protocol violation: an unasked message after %s %lld",
                    ks_exec_ev_name(expect), (long long)id);
    return false;
  }
  return true;
}

bool ks_exec_freeze(ks_exec *x) {
  if (x->dead)
    return false;
  if (kill(x->pid, SIGSTOP) != 0)
    return false;
  for (;;) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)x->pid, &si, WSTOPPED | WEXITED | WNOWAIT) != 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    if (si.si_code == CLD_STOPPED || si.si_code == CLD_TRAPPED)
      return true;
    reap(x, true);
    return false;
  }
}

void ks_exec_thaw(ks_exec *x) {
  if (!x->dead)
    kill(x->pid, SIGCONT);
}

void ks_exec_stop(ks_exec *x) {
  if (x->pid > 0 && !x->dead) {
    kill(x->pid, SIGCONT); /* a frozen executor reads no exit command */
    if (send(x->cmd_fd, "{\"cmd\":\"exit\"}\n", 15, MSG_NOSIGNAL) == 15 &&
        x->pidfd >= 0) {
      struct pollfd pf = {.fd = x->pidfd, .events = POLLIN};
      double left = x->deadline - ks_now();
      int ms = left < 1 ? (int)(left * 1000) : 1000;
      if (poll(&pf, 1, ms > 0 ? ms : 0) > 0)
        reap(x, true);
    }
    if (!x->dead) {
      kill_group(x);
      reap(x, true);
    }
  }
  if (x->log_fd >= 0)
    drain_log(x);
  int *fds[4] = {&x->pidfd, &x->cmd_fd, &x->ev_fd, &x->log_fd};
  for (int i = 0; i < 4; i++)
    if (*fds[i] >= 0) {
      close(*fds[i]);
      *fds[i] = -1;
    }
  if (x->tmpdir[0]) {
    ks_rm_rf(x->tmpdir);
    x->tmpdir[0] = 0;
  }
}

void ks_exec_free(ks_exec *x) {
  ks_exec_stop(x);
  ks_buf_free(&x->log);
}
