/* proc.c — child processes with a wall-clock limit.
 *
 * Builds (the C compiler) and evaluations (ksearch-runner) run in children.
 * The parent waits with pidfd + poll so that a hung child is killed at its
 * deadline without signals or sleeps, while its pipes are drained (a child
 * blocked on a full pipe would otherwise look hung). Children get
 * PR_SET_PDEATHSIG so that they die with ksearch (DESIGN.md: Evaluation).
 */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int pidfd_open_compat(pid_t pid) {
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

static void fill_result(int status, ks_proc_result *res) {
  if (WIFEXITED(status)) {
    res->exited = 1;
    res->exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res->signal = WTERMSIG(status);
  }
}

ks_code ks_proc_drain(pid_t pid, const int *fds, ks_buf *const *bufs, int nfds,
                      size_t cap_bytes, double timeout_s, ks_proc_result *res,
                      ks_err *err) {
  memset(res, 0, sizeof *res);
  double t0 = ks_now(), deadline = t0 + timeout_s;
  int pidfd = pidfd_open_compat(pid);
  int open_fds = nfds;
  bool done = false, killed = false;
  int status = 0;
  struct pollfd pf[9];
  if (nfds > 8)
    return ks_err_set(err, KS_ERR_INTERNAL, "ks_proc_drain: too many fds");
  bool eof[8] = {0};
  while (!done || open_fds > 0) {
    int n = 0;
    int idx[9];
    for (int i = 0; i < nfds; i++)
      if (!eof[i]) {
        pf[n].fd = fds[i];
        pf[n].events = POLLIN;
        idx[n++] = i;
      }
    if (!done && pidfd >= 0) {
      pf[n].fd = pidfd;
      pf[n].events = POLLIN;
      idx[n++] = -1;
    }
    double left = deadline - ks_now();
    int ms = killed ? 1000 : (left <= 0 ? 0 : (int)(left * 1000) + 1);
    if (pidfd < 0 && !done && ms > 20)
      ms = 20; /* no pidfd: fall back to polling waitpid */
    int r = n ? poll(pf, (nfds_t)n, ms) : (usleep(1000), 0);
    if (r < 0 && errno != EINTR)
      break;
    for (int k = 0; r > 0 && k < n; k++) {
      if (!pf[k].revents)
        continue;
      if (idx[k] < 0)
        continue; /* pidfd readable: reaped below */
      int i = idx[k];
      char tmp[65536];
      ssize_t got = read(fds[i], tmp, sizeof tmp);
      if (got > 0) {
        if (bufs[i] && bufs[i]->len < cap_bytes)
          ks_buf_append(bufs[i], tmp, (size_t)got);
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        eof[i] = true;
        open_fds--;
      }
    }
    if (!done) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        done = true;
        fill_result(status, res);
      }
    }
    if (!killed && !done && ks_now() >= deadline) {
      kill(-pid, SIGKILL); /* the child leads its own process group */
      kill(pid, SIGKILL);
      killed = true;
      res->timed_out = 1;
      deadline = ks_now() + 5;
    }
    if (done && open_fds > 0 && ks_now() > deadline + (killed ? 0 : 5)) {
      break; /* a grandchild holds the pipe open: stop waiting for it */
    }
    if (killed && done)
      break;
  }
  if (!done) {
    waitpid(pid, &status, 0);
    fill_result(status, res);
  }
  if (pidfd >= 0)
    close(pidfd);
  res->wall_s = ks_now() - t0;
  return KS_OK;
}

ks_code ks_run_capture(char *const argv[], const char *cwd, double timeout_s,
                       ks_buf *log, ks_proc_result *res, ks_err *err) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0)
    return ks_err_set(err, KS_ERR_IO, "pipe: %s", strerror(errno));
  int ex[2]; /* reports exec failure to the parent */
  if (pipe2(ex, O_CLOEXEC) != 0) {
    close(p[0]);
    close(p[1]);
    return ks_err_set(err, KS_ERR_IO, "pipe: %s", strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    close(ex[0]);
    close(ex[1]);
    return ks_err_set(err, KS_ERR_ENV, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(p[1], 1);
    dup2(p[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      dup2(devnull, 0);
    if (cwd && chdir(cwd) != 0)
      _exit(126);
    execvp(argv[0], argv);
    int e = errno;
    ssize_t w = write(ex[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  close(p[1]);
  close(ex[1]);
  int fds[1] = {p[0]};
  ks_buf *bufs[1] = {log};
  ks_code rc = ks_proc_drain(pid, fds, bufs, 1, 16 << 20, timeout_s, res, err);
  close(p[0]);
  int e = 0;
  if (read(ex[0], &e, sizeof e) == (ssize_t)sizeof e) {
    close(ex[0]);
    return ks_err_set(err, KS_ERR_ENV,
                      "cannot run %s: %s; install it or set "
                      "the matching environment variable (CC for the C "
                      "compiler)",
                      argv[0], strerror(e));
  }
  close(ex[0]);
  return rc;
}
