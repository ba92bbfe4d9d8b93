/* roofline.c — the roofline's bookkeeping (DESIGN.md: Spec, "roofline
 * fraction"): which machine this is, the per-machine cache file, JSON, the
 * dispatch to each backend's measurement, and the fraction of one timed call.
 * The measurements themselves live with each backend (c/roofline_native.c,
 * opencl/roofline_opencl.c).
 */
#include "backend/roofline.h"
#include "util/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- machine identity */

/* The CPU model: "model name" on x86; ARM kernels name it otherwise. */
static void cpu_model(char *out, size_t n) {
  static const char *keys[] = {"model name", "Hardware", "Processor",
                               "cpu model", "uarch"};
  snprintf(out, n, "unknown cpu");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[512];
  int found_rank = (int)(sizeof keys / sizeof keys[0]);
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (!colon)
      continue;
    for (int k = 0; k < found_rank; k++) {
      if (strncmp(line, keys[k], strlen(keys[k])))
        continue;
      char *v = colon + 1;
      while (*v == ' ' || *v == '\t')
        v++;
      v[strcspn(v, "\n")] = 0;
      if (*v) {
        snprintf(out, n, "%s", v);
        found_rank = k;
      }
      break;
    }
    if (found_rank == 0)
      break;
  }
  fclose(f);
}

/* Keeps [A-Za-z0-9._-] so the key is safe in a file name. */
static void sanitize(char *s) {
  for (; *s; s++) {
    char c = *s;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      *s = '_';
  }
}

void ks_roofline_identify(const char *backend, int threads, ks_roofline *out) {
  memset(out, 0, sizeof *out);
  if (threads <= 0)
    threads = ks_nproc();
  out->threads = threads;
  snprintf(out->backend, sizeof out->backend, "%s", backend);
  cpu_model(out->device, sizeof out->device);
  /* an OpenCL device is named by its driver; its identity (platform,
   * versions, driver) keys the cache, so a driver update re-measures */
  char identity[768] = "";
  if (!strcmp(backend, "opencl") &&
      !ks_roofline_opencl_identity(out->device, sizeof out->device, identity,
                                   sizeof identity))
    snprintf(identity, sizeof identity, "no OpenCL device");
  if (!strcmp(backend, "cuda") &&
      !ks_roofline_cuda_identity(out->device, sizeof out->device, identity,
                                 sizeof identity))
    snprintf(identity, sizeof identity, "no CUDA device");
  char host[65] = "localhost";
  if (gethostname(host, sizeof host - 1) != 0 || !host[0])
    snprintf(host, sizeof host, "localhost");
  host[64] = 0;
  sanitize(host);
  char hex[17];
  ks_hash_hex(ks_hash_str(identity[0] ? identity : out->device, 0), hex);
  snprintf(out->machine_key, sizeof out->machine_key, "%s-%s-t%d", host, hex,
           threads);
}

/* ---- cache */

static bool backend_known(const char *backend) {
  return backend && (!strcmp(backend, "c") || !strcmp(backend, "opencl") ||
                     !strcmp(backend, "cuda"));
}

static ks_code not_available(const char *backend, ks_err *err) {
  return ks_err_set(err, KS_ERR_ENV,
                    "roofline for backend %s is not available yet "
                    "(available: c, opencl, cuda); use --backend c",
                    backend ? backend : "(none)");
}

ks_code ks_roofline_cache_path(const char *backend, int threads, char *out,
                               size_t n, ks_err *err) {
  if (!backend_known(backend))
    return not_available(backend, err);
  char dir[PATH_MAX];
  ks_code rc = ks_cache_dir(dir, sizeof dir, err);
  if (rc)
    return ks_err_prefix(err, "roofline cache: ");
  ks_roofline id;
  ks_roofline_identify(backend, threads, &id);
  int w =
      snprintf(out, n, "%s/roofline-%s-%s.json", dir, backend, id.machine_key);
  if (w < 0 || (size_t)w >= n)
    return ks_err_set(err, KS_ERR_IO,
                      "roofline cache: path under %s is too long; set "
                      "KSEARCH_CACHE_DIR to a shorter folder",
                      dir);
  return KS_OK;
}

/* Reads a cache file; false (with the reason in err) when it is absent,
 * unreadable, or was written for another machine or thread count. */
static bool cache_read(const char *path, const ks_roofline *want,
                       ks_roofline *out, ks_err *err) {
  if (!ks_file_exists(path)) {
    ks_err_set(err, KS_ERR_IO, "%s: absent", path);
    return false;
  }
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j) {
    ks_err_set(err, KS_ERR_IO, "%s:%d: %s", path, je.line, je.text);
    return false;
  }
  ks_roofline r;
  ks_code rc = ks_roofline_from_json(j, &r, err);
  json_decref(j);
  if (rc) {
    ks_err_prefix(err, "%s: ", path);
    return false;
  }
  if (strcmp(r.backend, want->backend) || r.threads != want->threads ||
      strcmp(r.machine_key, want->machine_key)) {
    ks_err_set(err, KS_ERR_INPUT,
               "%s: written for backend %s, machine %s; expected %s, %s", path,
               r.backend, r.machine_key, want->backend, want->machine_key);
    return false;
  }
  *out = r;
  return true;
}

static ks_code cache_write(const char *path, const ks_roofline *r,
                           ks_err *err) {
  json_t *j = ks_roofline_to_json(r);
  char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
  json_decref(j);
  if (!text)
    return ks_err_set(err, KS_ERR_NOMEM, "%s: cannot format roofline JSON",
                      path);
  size_t len = strlen(text);
  ks_code rc = ks_write_file_atomic(path, text, len, err);
  free(text);
  return rc;
}

/* A ceiling measured while other processes hold the cores comes out low and
 * makes every later roofline fraction too high (seen here: 9.6 instead of
 * 29.5 GB/s at a load average of 4). Say so; the user can --remeasure. */
static void warn_if_busy(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  double load = 0;
  if (!f)
    return;
  if (fscanf(f, "%lf", &load) != 1)
    load = 0;
  fclose(f);
  if (load > 0.5)
    ks_log(KS_LOG_INFO,
           "roofline: the machine is busy (load average %.1f); the measured "
           "ceiling may be low and roofline fractions high. Re-measure when "
           "idle: ksearch roofline --remeasure",
           load);
}

static ks_code measure(const char *backend, int threads, ks_roofline *out,
                       ks_err *err) {
  if (!strcmp(backend, "c"))
    return ks_roofline_measure_c(threads, out, err);
  if (!strcmp(backend, "opencl"))
    return ks_roofline_measure_opencl(threads, out, err);
  if (!strcmp(backend, "cuda"))
    return ks_roofline_measure_cuda(threads, out, err);
  return not_available(backend, err);
}

ks_code ks_roofline_get(const char *backend, int threads, bool remeasure,
                        ks_roofline *out, ks_err *err) {
  if (!backend_known(backend))
    return not_available(backend, err);
  if (threads <= 0)
    threads = ks_nproc();
  char path[PATH_MAX];
  ks_code rc = ks_roofline_cache_path(backend, threads, path, sizeof path, err);
  if (rc)
    return rc;
  if (!remeasure) {
    ks_roofline want;
    ks_roofline_identify(backend, threads, &want);
    ks_err why;
    if (cache_read(path, &want, out, &why))
      return KS_OK;
    if (ks_file_exists(path))
      ks_log(KS_LOG_INFO, "ignoring roofline cache (%s); measuring again",
             why.msg);
  }
  warn_if_busy();
  rc = measure(backend, threads, out, err);
  if (rc)
    return rc;
  /* A cache that cannot be written costs a re-measurement next time, not
   * this result. */
  ks_err werr;
  if (cache_write(path, out, &werr))
    ks_log(KS_LOG_INFO, "could not cache the roofline: %s", werr.msg);
  return KS_OK;
}

/* ---- JSON */

json_t *ks_roofline_to_json(const ks_roofline *r) {
  json_t *j = json_pack(
      "{s:s, s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:s, "
      "s:i, s:f, s:s}",
      "backend", r->backend, "device", r->device, "machine_key", r->machine_key,
      "threads", r->threads, "read_gbps", r->read_gbps, "write_gbps",
      r->write_gbps, "copy_gbps", r->copy_gbps, "triad_gbps", r->triad_gbps,
      "bandwidth_gbps", r->bandwidth_gbps, "peak_gflops", r->peak_gflops, "isa",
      r->isa, "vector_floats", r->vector_floats, "measured_at", r->measured_at,
      "source", r->source);
  if (j && (r->l2_gbps > 0 || r->tc_gflops > 0 || r->sm_clock_mhz > 0)) {
    json_object_set_new(j, "l2_gbps", json_real(r->l2_gbps));
    json_object_set_new(j, "tc_bf16_gflops", json_real(r->tc_gflops));
    json_object_set_new(j, "sm_clock_mhz", json_real(r->sm_clock_mhz));
  }
  return j;
}

static ks_code get_str(const json_t *j, const char *key, char *dst, size_t n,
                       ks_err *err) {
  const json_t *v = json_object_get(j, key);
  if (!json_is_string(v))
    return ks_err_set(err, KS_ERR_INPUT,
                      "roofline JSON: field \"%s\" is missing or not a "
                      "string; run `ksearch roofline --remeasure` to rewrite "
                      "it",
                      key);
  if (strlen(json_string_value(v)) >= n)
    return ks_err_set(err, KS_ERR_INPUT,
                      "roofline JSON: field \"%s\" is longer than %zu "
                      "characters; run `ksearch roofline --remeasure` to "
                      "rewrite it",
                      key, n - 1);
  snprintf(dst, n, "%s", json_string_value(v));
  return KS_OK;
}

static ks_code get_num(const json_t *j, const char *key, double *dst,
                       ks_err *err) {
  const json_t *v = json_object_get(j, key);
  if (!json_is_number(v) || json_number_value(v) < 0)
    return ks_err_set(err, KS_ERR_INPUT,
                      "roofline JSON: field \"%s\" is missing or not a "
                      "non-negative number; run `ksearch roofline "
                      "--remeasure` to rewrite it",
                      key);
  *dst = json_number_value(v);
  return KS_OK;
}

ks_code ks_roofline_from_json(const json_t *j, ks_roofline *out, ks_err *err) {
  ks_roofline r;
  memset(&r, 0, sizeof r);
  if (!json_is_object(j))
    return ks_err_set(err, KS_ERR_INPUT,
                      "roofline JSON: expected an object; run `ksearch "
                      "roofline --remeasure` to rewrite it");
  double threads = 0, vf = 0;
  ks_code rc;
  if ((rc = get_str(j, "backend", r.backend, sizeof r.backend, err)) ||
      (rc = get_str(j, "device", r.device, sizeof r.device, err)) ||
      (rc = get_str(j, "machine_key", r.machine_key, sizeof r.machine_key,
                    err)) ||
      (rc = get_num(j, "threads", &threads, err)) ||
      (rc = get_num(j, "read_gbps", &r.read_gbps, err)) ||
      (rc = get_num(j, "write_gbps", &r.write_gbps, err)) ||
      (rc = get_num(j, "copy_gbps", &r.copy_gbps, err)) ||
      (rc = get_num(j, "triad_gbps", &r.triad_gbps, err)) ||
      (rc = get_num(j, "bandwidth_gbps", &r.bandwidth_gbps, err)) ||
      (rc = get_num(j, "peak_gflops", &r.peak_gflops, err)) ||
      (rc = get_str(j, "isa", r.isa, sizeof r.isa, err)) ||
      (rc = get_num(j, "vector_floats", &vf, err)) ||
      (rc = get_num(j, "measured_at", &r.measured_at, err)) ||
      (rc = get_str(j, "source", r.source, sizeof r.source, err)))
    return rc;
  if (threads < 1 || threads > 1e6 || threads != (double)(int)threads)
    return ks_err_set(err, KS_ERR_INPUT,
                      "roofline JSON: field \"threads\" must be a positive "
                      "whole number; run `ksearch roofline --remeasure` to "
                      "rewrite it");
  if (vf > 64 || vf != (double)(int)vf)
    return ks_err_set(err, KS_ERR_INPUT,
                      "roofline JSON: field \"vector_floats\" must be a whole "
                      "number of floats (0..64); run `ksearch roofline "
                      "--remeasure` to rewrite it");
  r.threads = (int)threads;
  r.vector_floats = (int)vf;
  /* GPU-only fields, absent from CPU rooflines */
  r.l2_gbps = json_number_value(json_object_get(j, "l2_gbps"));
  r.tc_gflops = json_number_value(json_object_get(j, "tc_bf16_gflops"));
  r.sm_clock_mhz = json_number_value(json_object_get(j, "sm_clock_mhz"));
  *out = r;
  return KS_OK;
}

/* ---- fraction */

double ks_roofline_fraction(const ks_roofline *r, double bytes, double flops,
                            double time_s) {
  if (!r || !(time_s > 0))
    return 0;
  double floor_s = 0;
  if (bytes > 0 && r->bandwidth_gbps > 0)
    floor_s = bytes / (r->bandwidth_gbps * 1e9);
  if (flops > 0 && r->peak_gflops > 0) {
    double t = flops / (r->peak_gflops * 1e9);
    if (t > floor_s)
      floor_s = t;
  }
  return floor_s / time_s;
}
