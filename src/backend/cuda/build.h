/* build.h — what the CUDA backend's parent side (build.c) and runner side
 * (backend_cuda.c) share: the launch plan of a candidate and the artifact
 * format. */
#ifndef KS_CUDA_BUILD_H
#define KS_CUDA_BUILD_H

#include "backend/backend.h"
#include "backend/cuda/tensormap.h"
#include "backend/opencl/launch.h"

#define CUDA_FORMAT "ksearch-cuda-1" /* bump when the artifact changes */

/* A candidate's launch plan: launch lines, parameter names, scratch,
 * the most dynamic shared memory and scratch any workload asks, tensormap
 * lines. */
typedef struct plan_info {
  ks_launch_plan plan;
  ks_param_value names[2 * KS_MAX_PARAMS];
  int n_names;
  bool scratch;
  size_t max_smem[KS_LAUNCH_MAX];
  double max_scratch;
  ks_tmap_set maps; /* tensormap lines */
} plan_info;

/* Evaluates every launch (and tensor map) for every workload the GPU runs,
 * checking CUDA's limits. */
ks_code ks_cuda_plan_check(const ks_task *task, plan_info *pi, const char *path,
                           ks_err *err);
void ks_cuda_plan_free(plan_info *pi);
/* The backend table's probe and build (build.c). */
ks_code ks_cuda_probe(char *device, size_t n, ks_err *err);
ks_code ks_cuda_build(const ks_task *task, const ks_candidate *cand,
                      const char *cache_dir, double timeout_s, ks_artifact *out,
                      ks_err *err);

#endif
