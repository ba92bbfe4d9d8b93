/* build.c — the parent side of the CUDA backend (DESIGN.md: Backend
 * interface, cuda; the whole story: backend_cuda.c's top comment): the
 * device probe, the launch plan (launch lines and tensormap lines, checked
 * against CUDA's limits for every workload the GPU runs, so that a bad
 * geometry is the candidate's compile_error), and the nvcc build of device
 * code only into a cached cubin with artifact.json naming it. A reference
 * build (backend=c) is handed to the c backend. The runner side
 * (backend_cuda.c) reads the same plan back at load.
 */
#include "backend/cuda/build.h"
#include "backend/cuda/cu.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const ks_backend_i ks_backend_c;

ks_code ks_cuda_probe(char *device, size_t n, ks_err *err) {
  ks_cu cu;
  ks_code rc = ks_cu_load(&cu, err);
  if (rc)
    return rc;
  ks_cu_dev d;
  rc = ks_cu_pick(&cu, &d, err);
  ks_cu_unload(&cu);
  if (rc)
    return rc;
  snprintf(device, n, "%s (%s, %d SMs, driver %d, CUDA device %d)", d.name,
           d.arch, d.sm_count, d.driver_version, d.index);
  return KS_OK;
}

/* ---- launch plan, shared by build (validation) and load */

/* Evaluates every launch for every workload the GPU runs, checking CUDA's
 * limits, so that a bad geometry is the candidate's compile_error. */
ks_code ks_cuda_plan_check(const ks_task *task, plan_info *pi, const char *path,
                           ks_err *err) {
  for (int wi = 0; wi < task->n_workloads; wi++) {
    const ks_workload *w = &task->workloads[wi];
    if (!ks_workload_applies(w, KS_DEV_GPU))
      continue;
    ks_launch_geom g[KS_LAUNCH_MAX];
    double sb;
    ks_code rc =
        ks_launch_eval(&pi->plan, task, w, pi->names, pi->n_names, g, &sb, err);
    if (rc)
      return ks_err_prefix(err, "%s: ", path);
    if (sb > pi->max_scratch)
      pi->max_scratch = sb;
    for (int k = 0; k < pi->plan.n; k++) {
      size_t threads = g[k].local[0] * g[k].local[1] * g[k].local[2];
      size_t gx = g[k].global[0] / g[k].local[0];
      size_t gy = g[k].global[1] / g[k].local[1];
      size_t gz = g[k].global[2] / g[k].local[2];
      char wl[256];
      ks_workload_format(task, w, wl, sizeof wl);
      if (threads > 1024)
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s: line %d: kernel %s: block of %zu threads for "
                          "workload %s; CUDA allows at most 1024",
                          path, pi->plan.k[k].line, pi->plan.k[k].kernel,
                          threads, wl);
      if (gx > 2147483647u || gy > 65535 || gz > 65535)
        return ks_err_set(err, KS_ERR_INPUT,
                          "%s: line %d: kernel %s: grid (%zu,%zu,%zu) for "
                          "workload %s; CUDA allows x < 2^31, y and z <= "
                          "65535",
                          path, pi->plan.k[k].line, pi->plan.k[k].kernel, gx,
                          gy, gz, wl);
      if (g[k].smem > pi->max_smem[k])
        pi->max_smem[k] = g[k].smem;
    }
    ks_tmap_geom tg[KS_TMAP_MAX];
    if (ks_tmap_eval(&pi->maps, task, w, pi->names, pi->n_names, tg, err))
      return ks_err_prefix(err, "%s: ", path);
  }
  return KS_OK;
}

void ks_cuda_plan_free(plan_info *pi) {
  ks_launch_free(&pi->plan);
  ks_tmap_free(&pi->maps);
}

static ks_code plan_for_task(const ks_task *task, const ks_candidate *cand,
                             plan_info *pi, ks_err *err) {
  memset(pi, 0, sizeof *pi);
  pi->n_names = ks_launch_names(cand, pi->names, 2 * KS_MAX_PARAMS);
  ks_code rc =
      ks_launch_parse(cand->source, cand->path, cand->entry, &pi->plan, err);
  if (!rc)
    rc = ks_launch_check_style(&pi->plan, true, cand->path, err);
  if (!rc)
    rc = ks_tmap_parse(cand->source, cand->path, task, &pi->maps, err);
  for (int i = 0; !rc && i < pi->plan.n; i++)
    pi->scratch |= pi->plan.k[i].scratch != NULL;
  if (!rc)
    rc = ks_cuda_plan_check(task, pi, cand->path, err);
  if (rc)
    ks_cuda_plan_free(pi);
  return rc;
}

/* ---- parent side: build */

ks_code ks_cuda_build(const ks_task *task, const ks_candidate *cand,
                      const char *cache_dir, double timeout_s, ks_artifact *out,
                      ks_err *err) {
  if (!strcmp(cand->backend, "c")) /* the task's reference */
    return ks_backend_c.build(task, cand, cache_dir, timeout_s, out, err);
  memset(out, 0, sizeof *out);
  plan_info *pi = ks_xcalloc(1, sizeof *pi);
  ks_code rc = plan_for_task(task, cand, pi, err);
  if (rc) {
    free(pi);
    err->code = KS_ERR_CANDIDATE; /* a header mistake: compile_error */
    return KS_ERR_CANDIDATE;
  }
  char arch[16], identity[512], nvv[128];
  rc = ks_cu_target(arch, sizeof arch, identity, sizeof identity, err);
  if (!rc)
    rc = ks_cu_nvcc_version(nvv, sizeof nvv, err);
  char defs[KS_MAX_PARAMS][160];
  char *defv[KS_MAX_PARAMS];
  int nd = 0;
  ks_buf key;
  ks_buf_init(&key);
  for (int i = 0; !rc && i < cand->n_set; i++) {
    snprintf(defs[nd], sizeof defs[nd], "-D%s=%s", cand->set[i].name,
             cand->set[i].value);
    defv[nd] = defs[nd];
    nd++;
  }
  ks_buf_puts(&key, CUDA_FORMAT);
  ks_buf_puts(&key, cand->source);
  for (int i = 0; i < nd; i++)
    ks_buf_puts(&key, defs[i]);
  ks_buf_puts(&key, cand->entry);
  if (!rc) {
    ks_buf_puts(&key, arch);
    ks_buf_puts(&key, identity);
    ks_buf_puts(&key, nvv);
  }
  ks_hash_hex(ks_hash64(key.data, key.len, 0x63756461ULL), out->hash);
  ks_buf_free(&key);
  char dir[PATH_MAX], src[PATH_MAX], cubin[PATH_MAX], tmp[PATH_MAX];
  char support[PATH_MAX];
  snprintf(dir, sizeof dir, "%.3800s/build/%s", cache_dir, out->hash);
  snprintf(out->path, sizeof out->path, "%.4000s/artifact.json", dir);
  snprintf(src, sizeof src, "%.4000s/candidate.cu", dir);
  snprintf(cubin, sizeof cubin, "%.4000s/candidate.cubin", dir);
  snprintf(tmp, sizeof tmp, "%.4000s/candidate.%d.cubin", dir, (int)getpid());
  if (!rc)
    rc =
        ks_cu_support_cubin(cache_dir, arch, nvv, support, sizeof support, err);
  if (!rc && ks_file_exists(out->path)) {
    out->cached = true;
    goto done;
  }
  if (!rc)
    rc = ks_mkdir_p(dir, err);
  if (!rc)
    rc = ks_write_file_atomic(src, cand->source, strlen(cand->source), err);
  double t0 = ks_now();
  if (!rc)
    rc =
        ks_cu_compile(src, tmp, arch, defv, nd, dir, timeout_s, &out->log, err);
  out->build_s = ks_now() - t0;
  if (!rc && rename(tmp, cubin) != 0)
    rc = ks_err_set(err, KS_ERR_IO, "%s: %s", cubin, strerror(errno));
  unlink(tmp);
  if (!rc) {
    char lines[KS_LAUNCH_MAX][512];
    int nl = ks_launch_lines(cand->source, lines, KS_LAUNCH_MAX);
    json_t *jl = json_array(), *params = json_object(), *jt = json_array();
    for (int i = 0; i < nl; i++)
      json_array_append_new(jl, json_string(lines[i]));
    char tl[KS_TMAP_MAX][512];
    int tno[KS_TMAP_MAX];
    int nt = ks_header_lines(cand->source, "tensormap", tl, tno, KS_TMAP_MAX);
    for (int i = 0; i < nt; i++)
      json_array_append_new(
          jt, json_pack("{s:i, s:s}", "line", tno[i], "text", tl[i]));
    for (int i = 0; i < pi->n_names; i++)
      json_object_set_new(params, pi->names[i].name,
                          json_string(pi->names[i].value));
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "format",
                  CUDA_FORMAT, "identity", identity, "arch", arch, "entry",
                  cand->entry, "cubin", "candidate.cubin", "support", support,
                  "launch", jl, "params", params, "tensormap", jt);
    rc = ks_artifact_write_json(out->path, j, err);
    json_decref(j);
  }
done:
  ks_cuda_plan_free(pi);
  free(pi);
  return rc;
}
