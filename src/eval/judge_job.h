/* judge_job.h — the judge's shared memory and the executor's job (judge.c's
 * internals, DESIGN.md: Evaluation): where every tensor of a workload sits
 * in the input and output memfds (page-aligned, guard bytes between), the
 * sealed memfds themselves, and the job JSON that tells an executor the
 * task, the layout, the limits and the eviction. */
#ifndef KS_EVAL_JUDGE_JOB_H
#define KS_EVAL_JUDGE_JOB_H

#include "eval/judge.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct layout {
  size_t in_off[KS_MAX_TENSORS], in_b[KS_MAX_TENSORS];
  size_t out_off[KS_MAX_TENSORS], out_b[KS_MAX_TENSORS];
  int64_t out_n[KS_MAX_TENSORS];
  size_t in_end, out_end;
} layout;

typedef struct shm {
  int fd;
  unsigned char *map;
  size_t size;
} shm;

/* Tensors start on page boundaries. */
static inline size_t ks_judge_page_up(size_t b) {
  return (b + 4095) & ~(size_t)4095;
}
/* The offsets and sizes of workload w's tensors. */
void ks_judge_layout(const ks_task *t, const ks_workload *w, layout *l);
/* A memfd the judge maps read-write (see judge_job.c). */
ks_code ks_judge_shm_new(shm *s, const char *name, size_t size,
                         bool seal_writes, ks_err *err);
void ks_judge_shm_free(shm *s);
/* The job line of an executor in `mode` ("candidate", "probe", ...). */
json_t *ks_judge_job_json(const ks_judge_plan *p, const char *mode,
                          const char *backend, bool landlock, bool host,
                          size_t in_size, size_t out_size);

#endif
