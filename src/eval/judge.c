/* judge.c — see judge.h. One evaluation, as the judge sees it:
 *
 *   start the executor (job on its command pipe), ping it to calibrate the
 *   round trip, have it load the artifact (C: inside the sandbox), then per
 *   workload: for each correctness seed and then each timing set (in an
 *   order drawn from getrandom, each set used once: no timed repetition
 *   sees inputs it has seen before), write the inputs into the sealed input
 *   memfd, poison the outputs, prep (device upload, cache eviction), call,
 *   collect (device download), freeze the executor, check guards and
 *   compare with the reference, thaw. Beside each timed repetition the
 *   probe executor (trusted code only) moves the workload's bytes, so the
 *   ceiling is measured in the same minute on the same footprint.
 */
#include "eval/judge.h"
#include "backend/backend.h"
#include "eval/correctness.h"
#include "eval/judge_job.h"
#include "eval/sandbox.h"
#include "task/inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUARD KS_EXEC_GUARD
#define GBYTE KS_EXEC_GUARD_BYTE

void ks_judge_ref_file(const char *ref_dir, const ks_task *task,
                       const ks_workload *w, uint64_t seed, const char *out,
                       char *path, size_t n) {
  char hex[17];
  ks_hash_hex(ks_hash64(w->axis, sizeof(int64_t) * (size_t)task->n_axes, 5),
              hex);
  snprintf(path, n, "%.3900s/%s-s%llu-%s.bin", ref_dir, hex,
           (unsigned long long)seed, out);
}

int ks_judge_sets_for(const ks_task *task, const ks_workload *w,
                      const ks_timing_opts *t) {
  double out = 0;
  for (int i = 0; i < task->n_outputs; i++)
    out += (double)ks_tensor_numel(task, &task->outputs[i], w) *
           (double)ks_dtype_size(task->outputs[i].dtype);
  int lo = t->min_reps > 0 ? t->min_reps : 10;
  int hi = t->max_reps > 0 ? t->max_reps : KS_MAX_SETS;
  if (hi > KS_MAX_SETS)
    hi = KS_MAX_SETS;
  if (lo > hi)
    lo = hi;
  /* the reference outputs of every set are cached: 256 MiB per workload */
  double fit = out > 0 ? (256.0 * (1 << 20)) / out : hi;
  int n = fit >= hi ? hi : (int)fit;
  return n < lo ? lo : n;
}

double ks_judge_start_limit(const ks_judge_plan *p) {
  return p->start_timeout_s > 0 ? p->start_timeout_s : p->timeout_s;
}

/* Starts the executor of `backend`: ksearch-runner, or the program the
 * backend names (mlx: its Python executor), with the plan's threads and
 * limits (its start's, then its calls'). */
static ks_code start(ks_exec *x, const char *backend, json_t *job,
                     const shm *in, const shm *out, const ks_judge_plan *p,
                     ks_err *err) {
  const ks_backend_i *be = ks_backend_get(backend);
  char store[KS_EXEC_ARGV_MAX][PATH_MAX];
  char *argv[KS_EXEC_ARGV_MAX + 1] = {NULL};
  if (be && be->executor_argv) {
    ks_code rc = be->executor_argv(store, argv, err);
    if (rc) {
      json_decref(job);
      return rc;
    }
  }
  char *text = json_dumps(job, JSON_COMPACT);
  json_decref(job);
  /* host C executors (candidates, the reference, the probe) spin: the
   * judge freezes each one whenever it is not talking to it */
  ks_code rc = ks_exec_start_argv(x, argv[0] ? argv : NULL, text, in->fd,
                                  out->fd, p->threads, !strcmp(backend, "c"),
                                  ks_judge_start_limit(p), p->timeout_s, err);
  free(text);
  return rc;
}

static bool guards_ok(const ks_task *t, const layout *l, const shm *out,
                      char *why, size_t n) {
  for (int i = 0; i < t->n_outputs; i++) {
    const unsigned char *d = out->map + l->out_off[i];
    for (long k = GUARD; k >= 1; k--)
      if (d[-k] != GBYTE) {
        snprintf(why, n,
                 "wrote before the start of output %s (guard bytes changed "
                 "at offset %+ld)",
                 t->outputs[i].name, -k);
        return false;
      }
    size_t tail =
        ks_judge_page_up(l->out_b[i] ? l->out_b[i] : 1) + GUARD - l->out_b[i];
    for (size_t k = 0; k < tail; k++)
      if (d[l->out_b[i] + k] != GBYTE) {
        snprintf(why, n,
                 "wrote past the end of output %s (guard bytes changed at "
                 "offset %+ld)",
                 t->outputs[i].name, (long)k + 1);
        return false;
      }
  }
  return true;
}

/* The reference output file of n bytes, mapped read-only (no copy: on
 * large workloads a read into a buffer cost the judge as much as the
 * comparison). NULL when it is missing or short; unmap with munmap(p, n).
 * The cache is the judge's own (no executor can write it), written whole
 * by rename, so the file cannot shrink under the mapping. */
static const void *map_ref(const char *path, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  struct stat st;
  static const char empty[1];
  void *p = MAP_FAILED;
  bool fits = fstat(fd, &st) == 0 && (size_t)st.st_size == n;
  if (fits && n > 0)
    p = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (fits && n == 0)
    return empty;
  return p == MAP_FAILED ? NULL : p;
}

static bool write_ref(const char *path, const void *buf, size_t n) {
  char tmp[PATH_MAX + 32];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return false;
  size_t put = 0;
  while (put < n) {
    ssize_t w = write(fd, (const char *)buf + put, n - put);
    if (w <= 0)
      break;
    put += (size_t)w;
  }
  bool ok = close(fd) == 0 && put == n && rename(tmp, path) == 0;
  if (!ok)
    unlink(tmp);
  return ok;
}

typedef struct judge_ctx {
  const ks_judge_plan *p;
  ks_judge_out *o;
  shm in, out, pout, aout;
  ks_exec probe, anchor;
  bool have_probe, device, have_anchor, anchor_device;
} judge_ctx;

void ks_input_cache_free(ks_input_cache *c) {
  for (int i = 0; i < c->n; i++)
    free(c->e[i].data);
  c->n = 0;
  c->used = 0;
}

const char *const ks_judge_phase_names[KS_JUDGE_PHASES] = {
    "start", "inputs", "calls", "compare", "beside"};

static void fill_inputs(judge_ctx *c, const ks_workload *w, const layout *l,
                        uint64_t seed) {
  double t0 = ks_now();
  const ks_task *t = c->p->task;
  ks_input_cache *ic = c->p->inputs;
  int wi = (int)(w - t->workloads);
  int hit = -1;
  for (int k = 0; ic && k < ic->n && hit < 0; k++)
    if (ic->e[k].wl == wi && ic->e[k].seed == seed)
      hit = k;
  size_t total = 0;
  for (int i = 0; i < t->n_inputs; i++)
    total += l->in_b[i];
  if (hit >= 0) {
    size_t off = 0;
    for (int i = 0; i < t->n_inputs; i++) {
      memcpy(c->in.map + l->in_off[i], ic->e[hit].data + off, l->in_b[i]);
      off += l->in_b[i];
    }
  } else {
    for (int i = 0; i < t->n_inputs; i++)
      ks_inputs_fill(t, &t->inputs[i], w, seed, c->in.map + l->in_off[i]);
    if (ic && ic->n < (int)(sizeof ic->e / sizeof *ic->e) &&
        ic->used + total <= ic->budget) {
      unsigned char *d = malloc(total ? total : 1);
      if (d) {
        size_t off = 0;
        for (int i = 0; i < t->n_inputs; i++) {
          memcpy(d + off, c->in.map + l->in_off[i], l->in_b[i]);
          off += l->in_b[i];
        }
        ic->e[ic->n].wl = wi;
        ic->e[ic->n].seed = seed;
        ic->e[ic->n].bytes = total;
        ic->e[ic->n++].data = d;
        ic->used += total;
      }
    }
  }
  /* guard bytes in the gaps around the outputs, poison in the outputs */
  size_t at = 0;
  for (int i = 0; i < t->n_outputs; i++) {
    memset(c->out.map + at, GBYTE, l->out_off[i] - at);
    ks_output_poison(&t->outputs[i], c->out.map + l->out_off[i], l->out_n[i]);
    at = l->out_off[i] + l->out_b[i];
  }
  memset(c->out.map + at, GBYTE, l->out_end - at);
  c->o->phase_s[KS_PH_INPUTS] += ks_now() - t0;
}

/* One exchange with an executor: thaw it (frozen since its last one), prep
 * (device upload, cache eviction), call, collect on device buffers.
 * ping_max: the candidate's, whose slowest round trip with the executor
 * awake bounds what the judge's clock adds to a call (a ping before the
 * call); NULL for trusted executors. false when the executor is gone; a
 * device failure returns true with *failed set and the reason in why. */
static bool exchange(ks_exec *x, bool device, int wi, bool evict,
                     double *ping_max, int64_t *claimed, int64_t *window,
                     int64_t *dev_ns, char *why, size_t n, bool *failed) {
  ks_exec_event ev;
  char cmd[128];
  *failed = false;
  ks_exec_thaw(x);
  snprintf(cmd, sizeof cmd, "\"cmd\":\"prep\",\"wl\":%d,\"evict\":%s", wi,
           evict ? "true" : "false");
  if (!ks_exec_ask(x, cmd, KS_EV_PREPPED, &ev, NULL))
    return false;
  int64_t ping;
  if (ping_max) {
    if (!ks_exec_ask(x, "\"cmd\":\"ping\"", KS_EV_PONG, &ev, &ping))
      return false;
    if ((double)ping > *ping_max)
      *ping_max = (double)ping;
  }
  if (!ks_exec_ask(x, "\"cmd\":\"call\"", KS_EV_RET, &ev, window))
    return false;
  *claimed = ev.ns;
  *dev_ns = ev.dev_ns;
  if (ev.ns > *window + 1000) {
    ks_exec_violate(x,
                    "protocol violation: the executor claimed %lld ns for a "
                    "call the judge saw take %lld ns",
                    (long long)ev.ns, (long long)*window);
    return false;
  }
  if (device) {
    if (!ks_exec_ask(x, "\"cmd\":\"collect\"", KS_EV_COLLECTED, &ev, NULL))
      return false;
    if (ev.text[0]) {
      ks_strlcpy(why, ev.text, n);
      *failed = true;
    }
  }
  return true;
}

/* One call of the candidate (exchange above). */
static bool one_call(judge_ctx *c, int wi, bool evict, int64_t *claimed,
                     int64_t *window, int64_t *dev_ns, char *why, size_t n,
                     bool *failed) {
  double t0 = ks_now();
  bool r = exchange(&c->o->x, c->device, wi, evict, &c->o->ping_ns, claimed,
                    window, dev_ns, why, n, failed);
  c->o->phase_s[KS_PH_CALLS] += ks_now() - t0;
  return r;
}

/* Freezes the executor, checks guards and compares with the reference (or
 * stores the outputs, in reference mode); the executor stays frozen until
 * the next call (one_call). false with why. */
static bool judge_outputs(judge_ctx *c, const ks_workload *w, const layout *l,
                          uint64_t seed, ks_judge_wl *r, char *why, size_t n,
                          bool *gone) {
  const ks_task *t = c->p->task;
  ks_exec *x = &c->o->x;
  *gone = false;
  if (!ks_exec_freeze(x)) {
    *gone = true;
    return false;
  }
  double t0 = ks_now();
  bool ok = guards_ok(t, l, &c->out, why, n);
  for (int i = 0; ok && i < t->n_outputs; i++) {
    char path[PATH_MAX];
    ks_judge_ref_file(c->p->ref_dir, t, w, seed, t->outputs[i].name, path,
                      sizeof path);
    const unsigned char *got = c->out.map + l->out_off[i];
    if (c->p->reference) {
      if (!ks_file_exists(path) && !write_ref(path, got, l->out_b[i])) {
        snprintf(why, n, "cannot write the reference output %.500s", path);
        ok = false;
      }
      continue;
    }
    const void *ref = map_ref(path, l->out_b[i]);
    if (!ref) {
      snprintf(why, n,
               "the reference output %.480s is missing or short; run "
               "again (it is recomputed)",
               path);
      ok = false;
      break;
    }
    ks_compare cmp;
    ks_compare_outputs(t->outputs[i].name, t->outputs[i].dtype, got, ref,
                       l->out_n[i], ks_task_tolerance(t, t->outputs[i].dtype),
                       &cmp);
    if (l->out_b[i] > 0)
      munmap((void *)ref, l->out_b[i]);
    if (cmp.max_abs_err > r->max_abs_err)
      r->max_abs_err = cmp.max_abs_err;
    if (cmp.max_rel_err > r->max_rel_err)
      r->max_rel_err = cmp.max_rel_err;
    if (!cmp.ok) {
      ks_strlcpy(why, cmp.reason, n);
      ok = false;
    }
  }
  c->o->phase_s[KS_PH_COMPARE] += ks_now() - t0;
  return ok;
}

/* One probe call; *fl: the compute probe's flops done (0: bytes moved). */
static bool probe_once(judge_ctx *c, int wi, int k, int64_t *ns, double *fl) {
  ks_exec_event ev;
  char cmd[128], extra[40] = "";
  if (c->p->probe_flops[wi] > 0)
    snprintf(extra, sizeof extra, ",\"fl\":%.0f", c->p->probe_flops[wi]);
  snprintf(cmd, sizeof cmd,
           "\"cmd\":\"probe\",\"wl\":%d,\"evict\":%s,\"nt\":%s%s", wi,
           c->p->evict ? "true" : "false", k % 2 ? "true" : "false", extra);
  ks_exec_thaw(&c->probe);
  if (!ks_exec_ask(&c->probe, cmd, KS_EV_PROBED, &ev, NULL))
    return false;
  *ns = ev.ns;
  *fl = (double)ev.value;
  /* an answer of the other kind (flops asked, bytes moved, or the
   * reverse) measured something else: no probe for this rep */
  bool same = (c->p->probe_flops[wi] > 0) == (ev.value > 0);
  return ks_exec_freeze(&c->probe) && same;
}

/* One anchor call on the inputs the candidate just had. false: the anchor
 * is dropped for the rest (the evaluator's own times stand in). */
static bool anchor_once(judge_ctx *c, int wi, int64_t *ns) {
  int64_t claimed, window, dev_ns;
  char why[600];
  bool failed;
  bool ok = exchange(&c->anchor, c->anchor_device, wi, c->p->evict, NULL,
                     &claimed, &window, &dev_ns, why, sizeof why, &failed) &&
            !failed && ks_exec_freeze(&c->anchor);
  if (ok)
    *ns = c->anchor_device && dev_ns > 0 ? dev_ns : claimed;
  else {
    ks_exec_free(&c->anchor);
    c->have_anchor = false;
  }
  return ok;
}

static void shuffle(int *a, int n) {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
    seed = (uint64_t)ks_now_ns();
  ks_rng r;
  ks_rng_seed(&r, seed, 77);
  for (int i = 0; i < n; i++)
    a[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(ks_rng_u64(&r) % (uint64_t)(i + 1));
    int tmp = a[i];
    a[i] = a[j];
    a[j] = tmp;
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Whether every output of (w, seed) is in the reference cache already. */
static bool ref_stored(const ks_judge_plan *p, const ks_workload *w,
                       uint64_t seed) {
  const ks_task *t = p->task;
  for (int i = 0; i < t->n_outputs; i++) {
    char path[PATH_MAX];
    ks_judge_ref_file(p->ref_dir, t, w, seed, t->outputs[i].name, path,
                      sizeof path);
    if (!ks_file_exists(path))
      return false;
  }
  return true;
}

/* One untimed call on the inputs of `seed`, judged (or stored, in
 * reference mode): *ok is the verdict. false when the executor is gone. */
static bool judged_call(judge_ctx *c, int wi, const layout *l, uint64_t seed,
                        char *why, size_t n, bool *ok) {
  const ks_workload *w = &c->p->task->workloads[wi];
  int64_t claimed, window, dev_ns;
  bool failed = false, gone = false;
  fill_inputs(c, w, l, seed);
  if (!one_call(c, wi, false, &claimed, &window, &dev_ns, why, n, &failed))
    return false;
  *ok = !failed && judge_outputs(c, w, l, seed, &c->o->wl[wi], why, n, &gone);
  return !gone;
}

/* Correctness seeds, then the timing sets of one workload. false when the
 * executor is gone (the outcome fields say why). */
static bool run_workload(judge_ctx *c, int wi) {
  const ks_judge_plan *p = c->p;
  const ks_task *t = p->task;
  const ks_workload *w = &t->workloads[wi];
  ks_judge_wl *r = &c->o->wl[wi];
  layout l;
  ks_judge_layout(t, w, &l);
  c->o->in_flight = wi;
  r->ran = true;
  char why[600] = "";
  bool gone = false, failed = false;
  int64_t claimed, window, dev_ns;
  bool ok = true;
  for (int s = 0; ok && s < p->n_seeds; s++) {
    /* reference mode: stored already, nothing to compute */
    if (p->reference && ref_stored(p, w, p->seeds[s]))
      continue;
    if (!judged_call(c, wi, &l, p->seeds[s], why, sizeof why, &ok))
      return false;
    if (!ok && s > 0) {
      char more[600];
      snprintf(more, sizeof more,
               "%.440s (seed %d of %d; the earlier seeds "
               "passed)",
               why, s + 1, p->n_seeds);
      ks_strlcpy(why, more, sizeof why);
    }
  }
  int nsets = p->n_sets[wi];
  /* a reference that only has to fill the cache: each set is a seed */
  for (int k = 0; ok && p->reference && p->outputs_only && k < nsets; k++) {
    uint64_t seed = p->set_seed0 + (uint64_t)k;
    if (!ref_stored(p, w, seed) &&
        !judged_call(c, wi, &l, seed, why, sizeof why, &ok))
      return false;
  }
  if (p->reference && p->outputs_only)
    nsets = 0;
  if (ok && nsets > 0) {
    int order[KS_MAX_SETS];
    shuffle(order, nsets);
    double cl[KS_MAX_SETS], dv[KS_MAX_SETS], pr[KS_MAX_SETS], an[KS_MAX_SETS];
    /* paired probe and candidate times, by the probe's store variant */
    double pp[2][KS_MAX_SETS], pc[2][KS_MAX_SETS];
    int npq[2] = {0, 0};
    double wmin = 0;
    int nd = 0, np = 0, na = 0;
    for (int k = 0; ok && k < nsets; k++) {
      uint64_t seed = p->set_seed0 + (uint64_t)order[k];
      fill_inputs(c, w, &l, seed);
      if (!one_call(c, wi, p->evict, &claimed, &window, &dev_ns, why,
                    sizeof why, &failed))
        return false;
      ok = !failed && judge_outputs(c, w, &l, seed, r, why, sizeof why, &gone);
      if (gone)
        return false;
      if (!ok) {
        char more[600];
        snprintf(more, sizeof more,
                 "%.400s (in timed repetition %d, on inputs it had not seen "
                 "before; the correctness seeds passed)",
                 why, k + 1);
        ks_strlcpy(why, more, sizeof why);
        break;
      }
      cl[k] = (double)claimed;
      if (dev_ns >= 0)
        dv[nd++] = (double)dev_ns;
      if (k == 0 || window < wmin)
        wmin = (double)window;
      /* the probe and the anchor run while the candidate's executor is
       * stopped (judge_outputs left it so): nothing it left behind can slow
       * them (a slower anchor or a lower ceiling would only flatter it) */
      double tb = ks_now();
      int64_t pns;
      double pfl = 0;
      if (c->have_probe && probe_once(c, wi, k, &pns, &pfl)) {
        pr[np++] = (double)pns;
        /* a compute probe has one variant: its pairs pool */
        int v = pfl > 0 ? 0 : k % 2;
        if (pfl > 0)
          r->probe_flops = pfl;
        /* the candidate's time of this rep as the judge counts it: never
         * less than its exchange less the round trip */
        double tk = (double)window - c->o->ping_ns;
        tk = p->reference || (double)claimed > tk ? (double)claimed : tk;
        if (tk > 0) {
          pp[v][npq[v]] = (double)pns;
          pc[v][npq[v]++] = tk;
        }
      }
      int64_t ans;
      if (c->have_anchor && k < p->anchor_sets[wi] && anchor_once(c, wi, &ans))
        an[na++] = (double)ans;
      c->o->phase_s[KS_PH_BESIDE] += ks_now() - tb;
    }
    if (na > 0) {
      qsort(an, (size_t)na, sizeof *an, cmp_d);
      r->anchor_reps = na;
      r->anchor_ns_min = an[0];
      r->anchor_ns_median = an[na / 2];
    }
    if (ok) {
      r->claimed = ks_time_summarize(cl, nsets);
      r->window_min_ns = wmin;
      /* the time that counts: never less than the judge's own fastest
       * exchange less the calibrated round trip */
      double floor_ns = wmin - c->o->ping_ns;
      r->time_ns = r->claimed.min_ns > floor_ns ? r->claimed.min_ns : floor_ns;
      r->clock_verified = floor_ns > 0;
      if (p->reference) /* trusted code in its own executor */
        r->time_ns = r->claimed.min_ns;
      if (nd > 0) {
        qsort(dv, (size_t)nd, sizeof *dv, cmp_d);
        r->dev_ns_median = dv[nd / 2];
        r->dev_ns_min = dv[0];
      }
      if (np > 0) {
        qsort(pr, (size_t)np, sizeof *pr, cmp_d);
        r->probe_ns_min = pr[0];
        r->probe_ns_median = pr[np / 2];
        r->probe_bytes = 0;
        for (int i = 0; i < t->n_inputs; i++)
          r->probe_bytes += (double)l.in_b[i];
        for (int i = 0; i < t->n_outputs; i++)
          r->probe_bytes += (double)l.out_b[i];
        /* per store variant; the faster variant (the lower ratio) is the
         * ceiling */
        for (int v = 0; v < 2; v++) {
          int used;
          double q = ks_pair_ratio(pp[v], pc[v], npq[v], &used);
          if (q > 0 && (r->probe_ratio <= 0 || q < r->probe_ratio)) {
            r->probe_ratio = q;
            r->probe_pairs = used;
          }
        }
      }
      /* a gross lie is a violation; a small one is floored above */
      if (!p->reference && floor_ns > 100e3 &&
          r->claimed.min_ns * 4 < floor_ns) {
        ks_exec_violate(&c->o->x,
                        "protocol violation: the executor claimed %.0f ns for "
                        "its fastest call where the judge's clock allows no "
                        "less than %.0f ns",
                        r->claimed.min_ns, floor_ns);
        return false;
      }
    }
  }
  r->correct = ok;
  ks_strlcpy(r->reason, why, sizeof r->reason);
  return true;
}

/* Starts an executor beside the candidate (the probe, the anchor) on the
 * same input memfd and an output memfd of its own (the probe: the
 * candidate's, which it writes after the judge has compared them and before
 * the next call's poison, so that both move the same physical pages and a
 * lucky or unlucky placement of one buffer cannot favour either), loads its
 * artifact
 * when it has one, and leaves it frozen until its first call. false: it is
 * not there (the evaluation goes on without it). */
static bool start_beside(judge_ctx *c, ks_exec *x, shm *out, const char *name,
                         const char *mode, const char *backend,
                         const char *artifact, bool host, bool landlock,
                         size_t in_size, size_t out_size) {
  ks_judge_plan pp = *c->p;
  pp.artifact = artifact;
  ks_err e;
  ks_exec_event ev;
  return (out == &c->out ||
          ks_judge_shm_new(out, name, out_size, false, &e) == KS_OK) &&
         start(x, backend,
               ks_judge_job_json(&pp, mode, backend, landlock, host, in_size,
                                 out_size),
               &c->in, out, c->p, &e) == KS_OK &&
         x->ready &&
         (!artifact[0] ||
          ks_exec_ask(x, "\"cmd\":\"load\"", KS_EV_LOADED, &ev, NULL)) &&
         ks_exec_freeze(x);
}

ks_code ks_judge_run(const ks_judge_plan *p, ks_judge_out *o, ks_err *err) {
  memset(o, 0, sizeof *o);
  o->in_flight = -1;
  o->x.pid = -1;
  o->x.pidfd = o->x.cmd_fd = o->x.ev_fd = o->x.log_fd = -1;
  o->x.sigsys_nr = -1;
  const ks_task *t = p->task;
  judge_ctx c = {.p = p, .o = o};
  c.in.fd = c.out.fd = c.pout.fd = c.aout.fd = -1;
  c.probe.pid = c.anchor.pid = -1;
  double t_start = ks_now();
  size_t in_size = 4096, out_size = 4096;
  for (int wi = 0; wi < t->n_workloads; wi++) {
    if (p->skip[wi])
      continue;
    layout l;
    ks_judge_layout(t, &t->workloads[wi], &l);
    in_size = l.in_end > in_size ? l.in_end : in_size;
    out_size = l.out_end > out_size ? l.out_end : out_size;
  }
  const ks_backend_i *be = ks_backend_get(p->backend);
  if (!be)
    return ks_err_set(err, KS_ERR_INPUT, "unknown backend %s", p->backend);
  c.device = ks_backend_device_buffers(be);
  bool landlock = ks_landlock_abi() >= 1;
  if (!landlock)
    snprintf(o->landlock_note, sizeof o->landlock_note,
             "Landlock is not available: the executor cannot open files at "
             "all, and C candidates load before the filter closes (weaker)");
  ks_code rc = ks_judge_shm_new(&c.in, "ksearch-inputs", in_size, true, err);
  if (!rc)
    rc = ks_judge_shm_new(&c.out, "ksearch-outputs", out_size, false, err);
  if (rc)
    goto done;
  rc = start(&o->x, p->backend,
             ks_judge_job_json(p, p->reference ? "reference" : "candidate",
                               p->backend, landlock, !c.device, in_size,
                               out_size),
             &c.in, &c.out, p, err);
  if (rc || !o->x.ready)
    goto done;
  /* the round trip, measured while only trusted code runs there */
  double pings[16];
  int np = 0;
  for (int i = 0; i < 16; i++) {
    ks_exec_event ev;
    int64_t win;
    if (!ks_exec_ask(&o->x, "\"cmd\":\"ping\"", KS_EV_PONG, &ev, &win))
      goto done;
    pings[np++] = (double)win;
  }
  qsort(pings, (size_t)np, sizeof *pings, cmp_d);
  o->ping_ns = pings[np - 1]; /* the slowest: a generous overhead */
  {
    ks_exec_event ev;
    if (!ks_exec_ask(&o->x, "\"cmd\":\"load\"", KS_EV_LOADED, &ev, NULL) ||
        !ks_exec_freeze(&o->x))
      goto done;
  }
  /* the host probe (C, host memory), or a device backend's own
   * (probe_move: an executor of that backend on the same artifact, whose
   * kernels it never launches) */
  bool dev_probe = ks_backend_device_probe(be) && !p->reference && p->artifact;
  if (p->probe)
    c.have_probe = start_beside(
        &c, &c.probe, dev_probe ? &c.pout : &c.out, "ksearch-probe", "probe",
        dev_probe ? p->backend : "c", dev_probe ? p->artifact : "", !dev_probe,
        landlock, in_size, out_size);
  if (p->anchor_artifact && p->anchor_artifact[0]) {
    const ks_backend_i *abe = ks_backend_get(p->anchor_backend);
    c.anchor_device = abe && ks_backend_device_buffers(abe);
    bool ref = !strcmp(p->anchor_backend, "c") && !p->anchor_untrusted;
    c.have_anchor =
        abe && start_beside(&c, &c.anchor, &c.aout, "ksearch-anchor",
                            ref ? "reference" : "candidate", p->anchor_backend,
                            p->anchor_artifact, !c.anchor_device, landlock,
                            in_size, out_size);
  }
  o->phase_s[KS_PH_START] = ks_now() - t_start;
  for (int wi = 0; wi < t->n_workloads; wi++)
    if (!p->skip[wi] && !run_workload(&c, wi))
      goto done;
  o->finished = true;
  o->in_flight = -1;
done:
  if (c.have_probe || c.probe.pid > 0)
    ks_exec_free(&c.probe);
  if (c.have_anchor || c.anchor.pid > 0)
    ks_exec_free(&c.anchor);
  if (c.aout.fd >= 0)
    ks_judge_shm_free(&c.aout);
  ks_exec_stop(&o->x);
  ks_judge_shm_free(&c.in);
  ks_judge_shm_free(&c.out);
  if (c.pout.fd >= 0)
    ks_judge_shm_free(&c.pout);
  return rc;
}

void ks_judge_out_free(ks_judge_out *o) { ks_exec_free(&o->x); }
