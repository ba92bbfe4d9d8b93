/* cuda_analyze.c — see cuda_analyze.h. Regular-expression patterns run over
 * a normalized text of the file: tokens joined by single spaces (comments
 * gone, `blockDim . x` spelled with spaces), each preprocessor directive on
 * its own line as `#pragma unroll`. An offset map turns a match back into a
 * source line. */
#include "spec/cuda_analyze.h"
#include "util/util.h"

#include <pthread.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct norm {
  ks_buf text;
  int *at;   /* text offset where token k starts */
  int *line; /* its source line */
  int n;
} norm;

static void norm_build(const ks_toks *ts, norm *nm) {
  ks_buf_init(&nm->text);
  nm->at = ks_xmalloc(sizeof(int) * (size_t)(ts->n + 1));
  nm->line = ks_xmalloc(sizeof(int) * (size_t)(ts->n + 1));
  nm->n = 0;
  for (int i = 0; i < ts->n; i++) {
    const ks_tok *t = &ts->t[i];
    if (t->kind == KS_TOK_PP_END) {
      ks_buf_puts(&nm->text, "\n");
      continue;
    }
    if (nm->text.len && nm->text.data[nm->text.len - 1] != '\n')
      ks_buf_puts(&nm->text, " ");
    nm->at[nm->n] = (int)nm->text.len;
    nm->line[nm->n++] = t->line;
    if (t->kind == KS_TOK_PP) {
      /* "#  pragma" -> "#pragma" */
      ks_buf_puts(&nm->text, "#");
      for (int k = 1; k < t->len; k++) {
        char c = ts->src[t->off + k];
        if (c != ' ' && c != '\t')
          ks_buf_append(&nm->text, &c, 1);
      }
    } else {
      ks_buf_append(&nm->text, ts->src + t->off, (size_t)t->len);
    }
  }
  if (!nm->text.data)
    ks_buf_puts(&nm->text, "");
}

static void norm_free(norm *nm) {
  ks_buf_free(&nm->text);
  free(nm->at);
  free(nm->line);
}

static int norm_line(const norm *nm, int off) {
  int lo = 0, hi = nm->n - 1, best = 0;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (nm->at[mid] <= off) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return nm->n ? nm->line[best] : 1;
}

typedef struct hits {
  ks_cuda_hit *h;
  int n, cap;
  int *slot; /* hit_slot's set; nslot a power of two */
  size_t nslot;
} hits;

/* (concept, line) seen: an open-addressing set of hit indexes, so that one
 * hit per (concept, line) costs O(1), not a scan of every earlier hit */
static size_t hit_slot(const hits *hs, const ks_concept *c, int line) {
  uint64_t h = ((uint64_t)(uintptr_t)c * 0x9E3779B97F4A7C15ULL) ^
               ((uint64_t)(uint32_t)line * 0xC2B2AE3D27D4EB4FULL);
  size_t mask = hs->nslot - 1, i = (size_t)(h ^ (h >> 29)) & mask;
  while (hs->slot[i] >= 0 &&
         !(hs->h[hs->slot[i]].concept == c && hs->h[hs->slot[i]].line == line))
    i = (i + 1) & mask;
  return i;
}

static void add_hit(hits *hs, const ks_concept *c, int line, const char *ev,
                    size_t evlen) {
  if ((size_t)hs->n * 2 + 2 > hs->nslot) { /* grow the set, rehash */
    free(hs->slot);
    hs->nslot = hs->nslot ? hs->nslot * 2 : 64;
    hs->slot = ks_xmalloc(hs->nslot * sizeof *hs->slot);
    for (size_t k = 0; k < hs->nslot; k++)
      hs->slot[k] = -1;
    for (int k = 0; k < hs->n; k++)
      hs->slot[hit_slot(hs, hs->h[k].concept, hs->h[k].line)] = k;
  }
  size_t at = hit_slot(hs, c, line);
  if (hs->slot[at] >= 0)
    return;
  hs->slot[at] = hs->n;
  if (hs->n == hs->cap) {
    hs->cap = hs->cap ? hs->cap * 2 : 32;
    hs->h = realloc(hs->h, (size_t)hs->cap * sizeof *hs->h);
    if (!hs->h)
      abort();
  }
  ks_cuda_hit *x = &hs->h[hs->n++];
  x->concept = c;
  x->line = line;
  if (evlen >= sizeof x->evidence)
    evlen = sizeof x->evidence - 1;
  memcpy(x->evidence, ev, evlen);
  x->evidence[evlen] = 0;
}

static void match_regex(const norm *nm, const ks_concept *c, const ks_detect *d,
                        hits *hs) {
  const char *s = nm->text.data;
  size_t pos = 0, len = nm->text.len;
  regmatch_t pm[1];
  while (pos < len) {
    /* REG_STARTEND: without it regexec takes strlen of the rest on every
     * call, quadratic in the number of matches */
    pm[0].rm_so = (regoff_t)pos;
    pm[0].rm_eo = (regoff_t)len;
    if (regexec(d->re, s, 1, pm, REG_STARTEND | (pos ? REG_NOTBOL : 0)))
      break;
    size_t a = (size_t)pm[0].rm_so, b = (size_t)pm[0].rm_eo;
    add_hit(hs, c, norm_line(nm, (int)a), s + a, b - a);
    pos = b > a ? b : a + 1;
  }
}

/* "cuda::memcpy_async" as the token text "cuda :: memcpy_async" */
static void match_qualified(const norm *nm, const ks_concept *c,
                            const ks_detect *d, hits *hs) {
  char pat[300];
  size_t o = 0;
  for (const char *p = d->pattern; *p && o + 5 < sizeof pat; p++) {
    if (p[0] == ':' && p[1] == ':') {
      memcpy(pat + o, " :: ", 4);
      o += 4;
      p++;
    } else {
      pat[o++] = *p;
    }
  }
  pat[o] = 0;
  const char *s = nm->text.data;
  for (const char *f = strstr(s, pat); f; f = strstr(f + 1, pat)) {
    char before = f > s ? f[-1] : ' ';
    char after = f[o];
    if ((before == ' ' || before == '\n') &&
        !(after == '_' || (after >= '0' && after <= '9') ||
          (after >= 'A' && after <= 'Z') || (after >= 'a' && after <= 'z')))
      add_hit(hs, c, norm_line(nm, (int)(f - s)), d->pattern,
              strlen(d->pattern));
  }
}

static void match_tokens(const ks_toks *ts, const ks_concept *c,
                         const ks_detect *d, hits *hs) {
  for (int i = 0; i < ts->n; i++) {
    const ks_tok *t = &ts->t[i];
    if (t->kind == KS_TOK_IDENT) {
      char w[128];
      ks_tok_text(ts, i, w, sizeof w);
      bool hit = false;
      switch (d->kind) {
      case KS_DETECT_IDENT: hit = !strcmp(w, d->pattern); break;
      case KS_DETECT_PREFIX:
        hit = !strncmp(w, d->pattern, strlen(d->pattern));
        break;
      case KS_DETECT_IDENT_REGEX: hit = !regexec(d->re, w, 0, NULL, 0); break;
      default: break;
      }
      if (hit)
        add_hit(hs, c, t->line, w, strlen(w));
      if (d->kind == KS_DETECT_PTX &&
          (!strcmp(w, "asm") || !strcmp(w, "__asm__") || !strcmp(w, "__asm"))) {
        int j = i + 1;
        while (ks_tok_is(ts, j, "volatile") || ks_tok_is(ts, j, "__volatile__"))
          j++;
        if (!ks_tok_is(ts, j, "(") || ts->t[j].match < 0)
          continue;
        for (int k = j + 1; k < ts->t[j].match; k++) {
          if (ts->t[k].kind != KS_TOK_STRING)
            continue;
          char s[512];
          ks_tok_text(ts, k, s, sizeof s);
          if (strstr(s, d->pattern))
            add_hit(hs, c, ts->t[k].line, d->pattern, strlen(d->pattern));
        }
      }
    }
  }
}

static const ks_concept_set *g_cs_for_sort;

static int cmp_hit(const void *a, const void *b) {
  const ks_cuda_hit *x = a, *y = b;
  long ix = x->concept - g_cs_for_sort->c, iy = y->concept - g_cs_for_sort->c;
  if (ix != iy)
    return ix < iy ? -1 : 1;
  return x->line - y->line;
}

ks_code ks_cuda_analyze_model(const ks_cu_model *m, const ks_concept_set *cs,
                              ks_cuda_report *out, ks_err *err) {
  (void)err;
  memset(out, 0, sizeof *out);
  norm nm;
  norm_build(&m->toks, &nm);
  hits hs = {0};
  for (int ci = 0; ci < cs->n; ci++) {
    const ks_concept *c = &cs->c[ci];
    for (int k = 0; k < c->n_detect; k++) {
      const ks_detect *d = &c->detect[k];
      if (d->kind == KS_DETECT_REGEX)
        match_regex(&nm, c, d, &hs);
      else if (d->kind == KS_DETECT_IDENT && strstr(d->pattern, "::"))
        match_qualified(&nm, c, d, &hs);
      else
        match_tokens(&m->toks, c, d, &hs);
    }
  }
  norm_free(&nm);
  free(hs.slot);
  /* qsort has no context argument in C11: the set goes through a static,
   * guarded by the caller holding the only reference (single use here) */
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  g_cs_for_sort = cs;
  if (hs.n)
    qsort(hs.h, (size_t)hs.n, sizeof *hs.h, cmp_hit);
  pthread_mutex_unlock(&lock);
  out->hits = hs.h;
  out->n_hits = hs.n;
  return KS_OK;
}

ks_code ks_cuda_analyze_file(const char *path, ks_cuda_report *out,
                             ks_err *err) {
  memset(out, 0, sizeof *out);
  const ks_concept_set *cs;
  ks_code rc = ks_concepts_get(&cs, err);
  if (rc)
    return rc;
  char *src = NULL;
  size_t len = 0;
  rc = ks_read_file(path, &src, &len, err);
  if (rc)
    return rc;
  ks_cu_model m;
  rc = ks_cu_parse(src, len, path, &m, err);
  if (!rc) {
    rc = ks_cuda_analyze_model(&m, cs, out, err);
    ks_cu_model_free(&m);
  }
  free(src);
  return rc;
}

void ks_cuda_report_free(ks_cuda_report *r) {
  free(r->hits);
  memset(r, 0, sizeof *r);
}

int ks_cuda_report_concepts(const ks_cuda_report *r, const ks_concept **out,
                            int max) {
  int n = 0;
  for (int i = 0; i < r->n_hits; i++) {
    if (i && r->hits[i].concept == r->hits[i - 1].concept)
      continue;
    if (n < max)
    out[n] = r->hits[i].concept;
    n++;
  }
  return n < max ? n : max;
}

int ks_cuda_report_line(const ks_cuda_report *r, const char *concept_id) {
  for (int i = 0; i < r->n_hits; i++)
    if (!strcmp(r->hits[i].concept->id, concept_id))
      return r->hits[i].line;
  return 0;
}

const ks_concept *ks_cuda_concept_of_ident(const ks_concept_set *cs,
                                           const char *ident) {
  for (int ci = 0; ci < cs->n; ci++) {
    const ks_concept *c = &cs->c[ci];
    for (int k = 0; k < c->n_detect; k++) {
      const ks_detect *d = &c->detect[k];
      if ((d->kind == KS_DETECT_IDENT && !strcmp(d->pattern, ident)) ||
          (d->kind == KS_DETECT_PREFIX &&
           !strncmp(ident, d->pattern, strlen(d->pattern))) ||
          (d->kind == KS_DETECT_IDENT_REGEX &&
           !regexec(d->re, ident, 0, NULL, 0)))
        return c;
    }
  }
  return NULL;
}
