/* util.h — small shared helpers: growable strings, files, hashing, random
 * numbers, logging, paths and child processes. One concept, one place
 * (DESIGN.md: Layout); every module that needs one of these includes this. */
#ifndef KS_UTIL_H
#define KS_UTIL_H

#include "ksearch.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- growable string (str.c) */
typedef struct ks_buf {
  char *data; /* always NUL-terminated when non-NULL */
  size_t len, cap;
} ks_buf;
void ks_buf_init(ks_buf *b);
void ks_buf_free(ks_buf *b);
void ks_buf_append(ks_buf *b, const char *s, size_t n); /* aborts on OOM */
void ks_buf_puts(ks_buf *b, const char *s);
void ks_buf_printf(ks_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Copies at most n-1 bytes and always terminates. */
void ks_strlcpy(char *dst, const char *src, size_t n);
char *ks_strdup(const char *s); /* aborts on OOM */
/* [A-Za-z_][A-Za-z0-9_]*: task names, axes, tensors, parameter macros. */
bool ks_is_c_ident(const char *s);
/* C11 keywords (and the C++/OpenCL ones a kernel signature meets). */
bool ks_is_c_keyword(const char *s);
/* A C identifier that is no keyword: usable as a name in a signature. */
bool ks_is_c_name(const char *s);
/* Async-signal-safe: writes head, v in decimal, then "}\n" to fd. Used by
 * the runner's SIGSYS and malloc reporters, which cannot call printf. */
void ks_write_event_u64(int fd, const char *head, uint64_t v);
void *ks_xmalloc(size_t n); /* aborts on OOM: only for small bookkeeping */
void *ks_xcalloc(size_t n, size_t m);

/* ---- files (fs.c) */
/* Reads a whole file (NUL-terminated); *len may be NULL. */
ks_code ks_read_file(const char *path, char **out, size_t *len, ks_err *err);
/* Writes via a temp file + fsync + rename so readers never see half a file. */
ks_code ks_write_file_atomic(const char *path, const void *data, size_t len,
                             ks_err *err);
ks_code ks_mkdir_p(const char *path, ks_err *err);
bool ks_file_exists(const char *path);
bool ks_dir_exists(const char *path);
/* Removes a folder and everything below it (best effort). */
void ks_rm_rf(const char *path);
/* "~/.cache/ksearch" or $KSEARCH_CACHE_DIR; created on first use. */
ks_code ks_cache_dir(char *out, size_t n, ks_err *err);
/* Folder of the running executable (for build/ksearch-runner and data). */
const char *ks_exe_dir(void);
/* ksearch-runner: $KSEARCH_RUNNER, else beside the running executable. */
const char *ks_runner_path(void);

/* ---- hashing (hash.c): FNV-1a 64, good enough for content-addressed caches */
uint64_t ks_hash64(const void *data, size_t n, uint64_t seed);
uint64_t ks_hash_str(const char *s, uint64_t seed);
void ks_hash_hex(uint64_t h, char out[17]);

/* ---- random numbers (rng.c): splitmix64 streams, reproducible per seed */
typedef struct ks_rng {
  uint64_t s;
} ks_rng;
void ks_rng_seed(ks_rng *r, uint64_t seed, uint64_t stream);
uint64_t ks_rng_u64(ks_rng *r);
double ks_rng_uniform(ks_rng *r); /* [0,1) */
double ks_rng_normal(ks_rng *r);  /* N(0,1) */

/* ---- logging (log.c): to stderr; stdout is reserved for --json output */
typedef enum { KS_LOG_QUIET, KS_LOG_INFO, KS_LOG_DEBUG } ks_log_level;
void ks_log_set_level(ks_log_level l);
ks_log_level ks_log_get_level(void);
void ks_log(ks_log_level l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- time (clock.c) */
double ks_now(void); /* monotonic seconds */
int64_t ks_now_ns(void);
/* Unix time (CLOCK_REALTIME): what is stored and compared across processes */
int64_t ks_wall_ns(void);
double ks_wall_now(void); /* seconds */
int ks_nproc(void);

/* ---- bulk work on every core (parallel.c) */
#define KS_PARALLEL_MAX 32
/* fn(ctx, i) for every i in [0, n), on up to `threads` threads (<= 0: the
 * online CPUs; at most KS_PARALLEL_MAX), the caller's included; returns when
 * all are done. fn must not depend on the thread it runs on. */
void ks_parallel_for(int64_t n, void (*fn)(void *ctx, int64_t i), void *ctx,
                     int threads);

/* ---- child processes (proc.c) */
typedef struct ks_proc_result {
  int exited;      /* 1 if it exited normally */
  int exit_status; /* valid when exited */
  int signal;      /* terminating signal, 0 if none */
  int timed_out;   /* killed by us at the wall-clock limit */
  double wall_s;
} ks_proc_result;
/* Runs argv with stdout+stderr appended to log (may be NULL), a wall-clock
 * limit, and the death signal set. Returns KS_ERR_ENV when exec fails. */
ks_code ks_run_capture(char *const argv[], const char *cwd, double timeout_s,
                       ks_buf *log, ks_proc_result *res, ks_err *err);
/* Drains nfds pipes into bufs (a NULL buf discards, capped at cap_bytes each)
 * until pid exits and the pipes close, with a wall-clock limit enforced via
 * pidfd + poll; on expiry the child's process group is killed. Reaps pid. */
ks_code ks_proc_drain(pid_t pid, const int *fds, ks_buf *const *bufs, int nfds,
                      size_t cap_bytes, double timeout_s, ks_proc_result *res,
                      ks_err *err);

#endif
