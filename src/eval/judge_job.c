/* judge_job.c — see judge_job.h: the memfd layout of a workload, the sealed
 * memfds and the job JSON of an executor; judge.c runs the evaluation over
 * them. */
#include "eval/judge_job.h"
#include "backend/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUARD KS_EXEC_GUARD

void ks_judge_layout(const ks_task *t, const ks_workload *w, layout *l) {
  size_t off = GUARD;
  for (int i = 0; i < t->n_inputs; i++) {
    l->in_b[i] = (size_t)ks_tensor_numel(t, &t->inputs[i], w) *
                 ks_dtype_size(t->inputs[i].dtype);
    l->in_off[i] = off;
    off += ks_judge_page_up(l->in_b[i] ? l->in_b[i] : 1) + GUARD;
  }
  l->in_end = off;
  off = GUARD;
  for (int i = 0; i < t->n_outputs; i++) {
    l->out_n[i] = ks_tensor_numel(t, &t->outputs[i], w);
    l->out_b[i] = (size_t)l->out_n[i] * ks_dtype_size(t->outputs[i].dtype);
    l->out_off[i] = off;
    off += ks_judge_page_up(l->out_b[i] ? l->out_b[i] : 1) + GUARD;
  }
  l->out_end = off;
}

/* A memfd the judge maps read-write. seal_writes: nobody else can ever map
 * it writable (F_SEAL_FUTURE_WRITE keeps the judge's own mapping); it can
 * never shrink, so reading it cannot fault the judge. */
ks_code ks_judge_shm_new(shm *s, const char *name, size_t size,
                         bool seal_writes, ks_err *err) {
  s->size = size;
  s->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  s->map = NULL;
  if (s->fd < 0)
    return ks_err_set(err, KS_ERR_ENV, "memfd_create: %s", strerror(errno));
  if (ftruncate(s->fd, (off_t)size) != 0) {
    close(s->fd);
    s->fd = -1;
    return ks_err_set(err, KS_ERR_ENV, "memfd of %zu bytes: %s", size,
                      strerror(errno));
  }
  s->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
  if (s->map == MAP_FAILED) {
    close(s->fd);
    s->fd = -1;
    s->map = NULL;
    return ks_err_set(err, KS_ERR_ENV, "mmap of %zu bytes: %s", size,
                      strerror(errno));
  }
  int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
  if (seal_writes)
    seals |= F_SEAL_FUTURE_WRITE;
  if (fcntl(s->fd, F_ADD_SEALS, seals) != 0) {
    munmap(s->map, size);
    close(s->fd);
    s->fd = -1;
    s->map = NULL;
    return ks_err_set(err, KS_ERR_ENV, "memfd seals: %s", strerror(errno));
  }
  return KS_OK;
}

void ks_judge_shm_free(shm *s) {
  if (s->map && s->map != MAP_FAILED)
    munmap(s->map, s->size);
  if (s->fd >= 0)
    close(s->fd);
}

json_t *ks_judge_job_json(const ks_judge_plan *p, const char *mode,
                          const char *backend, bool landlock, bool host,
                          size_t in_size, size_t out_size) {
  const ks_task *t = p->task;
  json_t *wls = json_array();
  for (int wi = 0; wi < t->n_workloads; wi++) {
    layout l;
    ks_judge_layout(t, &t->workloads[wi], &l);
    if (p->skip[wi]) /* never asked for: an empty layout */
      for (int i = 0; i < KS_MAX_TENSORS; i++) {
        l.in_off[i] = l.out_off[i] = GUARD;
        l.in_b[i] = l.out_b[i] = 0;
      }
    json_t *axes = json_array(), *sc = json_array(), *in = json_array(),
           *out = json_array();
    for (int a = 0; a < t->n_axes; a++)
      json_array_append_new(axes, json_integer(t->workloads[wi].axis[a]));
    for (int s = 0; s < t->n_scalars; s++)
      json_array_append_new(sc, json_real(t->scalars[s].value));
    for (int i = 0; i < t->n_inputs; i++)
      json_array_append_new(in, json_pack("[I,I]", (json_int_t)l.in_off[i],
                                          (json_int_t)l.in_b[i]));
    for (int i = 0; i < t->n_outputs; i++)
      json_array_append_new(out, json_pack("[I,I]", (json_int_t)l.out_off[i],
                                           (json_int_t)l.out_b[i]));
    json_array_append_new(wls, json_pack("{s:o, s:o, s:o, s:o}", "axes", axes,
                                         "scalars", sc, "in", in, "out", out));
  }
  const char *evict = "none";
  /* a GPU backend flushes its own L2 before every launch */
  const ks_backend_i *be = ks_backend_get(backend);
  bool gpu = be && ks_backend_device_class(be) == KS_DEV_GPU;
  if (p->evict && !gpu) {
#if defined(__x86_64__) || defined(__i386__)
    evict = host ? "clflush" : "stream";
#else
    evict = "stream";
#endif
  }
  return json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:f, s:I, s:I, s:s, s:b, "
                   "s:b, s:o}",
                   "mode", mode, "backend", backend, "artifact",
                   p->artifact ? p->artifact : "", "task", t->json_path,
                   "threads", p->threads, "mem_limit",
                   (json_int_t)p->mem_limit_bytes, "cpu_limit", p->cpu_limit_s,
                   "in_size", (json_int_t)in_size, "out_size",
                   (json_int_t)out_size, "evict", evict, "landlock", landlock,
                   "gpu", gpu, "workloads", wls);
}
