/* inputs.c — see inputs.h. The stream of each tensor is keyed by the task
 * name, the tensor name and the seed, and split into fixed chunks so that
 * the bytes never depend on the thread count or on the order tensors are
 * generated in. */
#include "task/inputs.h"
#include "util/util.h"

#include <math.h>
#include <string.h>

#define CHUNK 65536

static double draw(const ks_init *in, ks_rng *r, double *spare, bool *has) {
  switch (in->kind) {
  case KS_INIT_NORMAL: {
    double z;
    if (*has) {
      z = *spare;
      *has = false;
    } else {
      double u1 = ks_rng_uniform(r), u2 = ks_rng_uniform(r);
      if (u1 < 1e-300)
        u1 = 1e-300;
      double m = sqrt(-2.0 * log(u1));
      z = m * cos(6.283185307179586 * u2);
      *spare = m * sin(6.283185307179586 * u2);
      *has = true;
    }
    return in->a + in->b * z;
  }
  case KS_INIT_UNIFORM: return in->a + (in->b - in->a) * ks_rng_uniform(r);
  case KS_INIT_RANDINT:
    return in->a + floor((in->b - in->a + 1) * ks_rng_uniform(r));
  case KS_INIT_POSITIVE: return 0.25 + 1.75 * ks_rng_uniform(r);
  default: return 0;
  }
}

typedef struct fill_job {
  ks_init init;
  ks_dtype dtype;
  int64_t n;
  uint64_t seed, stream;
  void *buf;
} fill_job;

/* One chunk: its own stream, so any thread may draw it. */
static void fill_chunk(void *ctx, int64_t k) {
  const fill_job *j = ctx;
  int64_t c0 = k * CHUNK;
  ks_rng r;
  ks_rng_seed(&r, j->seed, j->stream ^ ((uint64_t)c0 * 0x9E3779B97F4A7C15ULL));
  double spare = 0;
  bool has = false;
  int64_t c1 = c0 + CHUNK < j->n ? c0 + CHUNK : j->n;
  if (j->dtype == KS_F32) {
    float *f = j->buf;
    for (int64_t i = c0; i < c1; i++)
      f[i] = (float)draw(&j->init, &r, &spare, &has);
  } else {
    for (int64_t i = c0; i < c1; i++)
      ks_dtype_store(j->dtype, j->buf, (size_t)i,
                     draw(&j->init, &r, &spare, &has));
  }
}

void ks_inputs_fill(const ks_task *task, const ks_tensor *t,
                    const ks_workload *w, uint64_t seed, void *buf) {
  ks_inputs_fill_threads(task, t, w, seed, buf, 0);
}

void ks_inputs_fill_threads(const ks_task *task, const ks_tensor *t,
                            const ks_workload *w, uint64_t seed, void *buf,
                            int threads) {
  int64_t n = ks_tensor_numel(task, t, w);
  uint64_t stream = ks_hash_str(t->name, ks_hash_str(task->name, 0));
  if (t->init.kind == KS_INIT_PERMUTATION) {
    ks_rng r;
    ks_rng_seed(&r, seed, stream);
    for (int64_t i = 0; i < n; i++)
      ks_dtype_store(t->dtype, buf, (size_t)i, (double)i);
    for (int64_t i = n - 1; i > 0; i--) {
      int64_t j = (int64_t)(ks_rng_u64(&r) % (uint64_t)(i + 1));
      double a = ks_dtype_load(t->dtype, buf, (size_t)i);
      ks_dtype_store(t->dtype, buf, (size_t)i,
                     ks_dtype_load(t->dtype, buf, (size_t)j));
      ks_dtype_store(t->dtype, buf, (size_t)j, a);
    }
    return;
  }
  fill_job j = {.init = ks_init_bounds(task, &t->init, w),
                .dtype = t->dtype,
                .n = n,
                .seed = seed,
                .stream = stream,
                .buf = buf};
  int64_t chunks = (n + CHUNK - 1) / CHUNK;
  /* a few chunks are not worth a thread's start */
  ks_parallel_for(chunks, fill_chunk, &j, chunks >= 4 ? threads : 1);
}

void ks_output_poison(const ks_tensor *t, void *buf, int64_t numel) {
  if (t->dtype == KS_F32) {
    float *f = buf;
    for (int64_t i = 0; i < numel; i++)
      f[i] = NAN;
  } else if (ks_dtype_is_float(t->dtype)) {
    uint16_t *h = buf; /* quiet NaN in both half formats */
    uint16_t nan = t->dtype == KS_F16 ? 0x7e00 : 0x7fc0;
    for (int64_t i = 0; i < numel; i++)
      h[i] = nan;
  } else {
    memset(buf, 0xA5, (size_t)numel * ks_dtype_size(t->dtype));
  }
}
