/* backend.h — the backend interface (DESIGN.md: Backend interface).
 *
 * One table of function pointers per backend, in the manner of ggml's
 * ggml_backend_i, and a registry. The parent process uses probe and build;
 * the sandboxed runner uses load, run, sync and unload. Adding a backend
 * means one folder under src/backend/ and one line in registry.c.
 */
#ifndef KS_BACKEND_H
#define KS_BACKEND_H

#include "eval/candidate.h"
#include "util/util.h"

#include <jansson.h>
#include <limits.h>

typedef struct ks_artifact {
  char path[PATH_MAX]; /* what load() takes: a shared object for c */
  char hash[17];       /* content hash of source + flags + compiler */
  bool cached;         /* true when an earlier build was reused */
  double build_s;      /* compile time (0 when cached) */
  ks_buf log;          /* compiler output */
} ks_artifact;

typedef struct ks_backend_i {
  const char *name;
  const char *description;
  /* Usable here? Fills a device description. KS_ERR_ENV says what to
   * install. */
  ks_code (*probe)(char *device, size_t n, ks_err *err);
  /* Source -> artifact, in a child process with a time limit, cached by
   * content hash under cache_dir. A compile error is KS_ERR_CANDIDATE with
   * the log in out->log. */
  ks_code (*build)(const ks_task *task, const ks_candidate *cand,
                   const char *cache_dir, double timeout_s, ks_artifact *out,
                   ks_err *err);
  /* Runner side, before the sandbox closes: load an artifact. */
  ks_code (*load)(const char *artifact, const ks_task *task, void **handle,
                  ks_err *err);
  /* One call on host buffers (inputs then outputs). */
  void (*run)(void *handle, void *const *bufs, const int64_t *axes,
              const double *scalars);
  /* Waits until the device is idle (no-op on the CPU). */
  void (*sync)(void *handle);
  void (*unload)(void *handle);
  /* load() may run after the sandbox closed (c: dlopen under Landlock, so
   * even a candidate's constructors run confined). Device runtimes need
   * files and threads to start and load before it closes. */
  bool load_sandboxed;

  /* ---- Optional: backends whose kernels read and write device memory
   * (OpenCL; CUDA and MLX later). NULL on the CPU backend, whose run() takes
   * host pointers. When dev_alloc is set, the runner allocates one device
   * buffer per input and output and passes those handles in run()'s bufs in
   * place of host pointers; it uploads inputs and NaN-filled outputs before
   * every checked call and downloads outputs and inputs after it, so the
   * checks of DESIGN.md: Evaluation apply unchanged. Called after the
   * sandbox closed: no files, no new threads. */
  /* A device buffer of `bytes` with `guard` bytes of guard_byte before and
   * after it (the tail padded to the page); NULL when out of memory. */
  void *(*dev_alloc)(void *handle, size_t bytes, size_t guard,
                     unsigned char guard_byte);
  void (*dev_free)(void *handle, void *buf);
  bool (*upload)(void *handle, void *buf, const void *src, size_t bytes);
  bool (*download)(void *handle, void *buf, void *dst, size_t bytes);
  /* 0 if the guards are intact, else the signed offset of the first changed
   * byte from the start (<0) or the end (>0) of the data, as on the host;
   * KS_GUARD_UNREADABLE (backend/guard_scan.h) when they could not be read
   * back, which fails the call like a changed byte. */
  long (*dev_guard_check)(void *handle, void *buf);
  /* After run() + sync(): false with a reason when a launch failed or the
   * backend's own buffers (scratch) were written out of bounds. */
  bool (*dev_check)(void *handle, char *reason, size_t n);
  /* Device-side time of the last run() in ns (profiling events: start of
   * the first kernel to the end of the last), 0 when unknown. */
  double (*device_time_ns)(void *handle);

  /* ---- Optional, device executors. Called by ks_sandbox_seccomp just
   * before the filter loads, with the libseccomp scmp_filter_ctx: adds what
   * the device driver needs on descriptors that are already open (CUDA: the
   * poll family its helper threads wait in; no ioctl). NULL: nothing. */
  ks_code (*sandbox_rules)(void *handle, void *scmp_ctx, ks_err *err);
  /* What the backend runs on, for workloads' "device" key (task.json): NULL
   * means cpu. OpenCL asks its device (CL_DEVICE_TYPE), CUDA is gpu. */
  ks_device_class (*device_class)(void);
  /* The ceiling probe on a device (DESIGN.md: Ceiling probe), in an
   * executor started in probe mode on the candidate's artifact (load()
   * ran, no kernel of the candidate is ever launched): reads in_bytes and
   * writes out_bytes of device memory with ksearch's own kernels, after an
   * L2 flush when evict; the device time in ns of the fastest of its
   * shapes, 0 on failure. NULL: host backends use the host probe, others
   * the cached roofline. */
  double (*probe_move)(void *handle, size_t in_bytes, size_t out_bytes,
                       bool evict);

  /* ---- Optional, backends whose executor is another program (mlx: a
   * Python executor speaking eval/exec_proto.h). Fills argv (at most
   * KS_EXEC_ARGV_MAX words, NULL-terminated, pointing into store) of the
   * program the judge starts in place of ksearch-runner. Such a backend's
   * outputs live in its runtime, so the judge sends collect as it does for
   * device buffers (ks_backend_device_buffers). */
  ks_code (*executor_argv)(char store[][PATH_MAX], char **argv, ks_err *err);
  /* With executor_argv: that program also answers probe mode on a GPU (the
   * ceiling probe with its runtime's own fastest copy; DESIGN.md: Ceiling
   * probe), so the judge starts it beside a GPU candidate as it does a
   * probe_move backend's executor. */
  bool executor_probes;
  /* Optional: the specs/targets id a candidate is checked against before
   * the build; NULL skips the check (a candidate that is not C-family code,
   * as mlx's ops form). Absent: the backend's name. */
  const char *(*spec_target)(const ks_candidate *cand);
} ks_backend_i;

#define KS_EXEC_ARGV_MAX 4

/* Whether the judge collects outputs (device buffers or another executor's
 * runtime) rather than reading them where the kernel wrote them. */
bool ks_backend_device_buffers(const ks_backend_i *be);

/* Whether the backend measures its own ceiling on the device beside a
 * candidate (probe_move, or an executor that probes, on a GPU). */
bool ks_backend_device_probe(const ks_backend_i *be);

/* The backend's device class (cpu when it has no device_class hook). */
ks_device_class ks_backend_device_class(const ks_backend_i *be);

const ks_backend_i *ks_backend_get(const char *name);
/* All registered backends, for `--backend` help and probing. */
int ks_backend_count(void);
const ks_backend_i *ks_backend_at(int i);
void ks_artifact_free(ks_artifact *a);
/* A build's JSON (artifact.json, a build request) written whole: indented,
 * keys sorted, through ks_write_file_atomic. */
ks_code ks_artifact_write_json(const char *path, json_t *j, ks_err *err);

#endif
