/* diff.c — the line diff of the report's "best kernel vs its parent"
 * (DESIGN.md: Report). A longest-common-subsequence table over the lines
 * left after the common head and tail: quadratic, so the middle is capped
 * (max_lines); kernels are a few hundred lines. Output is hunks with a few
 * lines of context, the rest folded into "~" markers. */
#include "report/report_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct lines {
  const char **p; /* start of each line */
  int *len;       /* length without the newline */
  int n;
} lines;

static void split_lines(const char *s, lines *out) {
  int cap = 16;
  out->p = ks_xmalloc((size_t)cap * sizeof *out->p);
  out->len = ks_xmalloc((size_t)cap * sizeof *out->len);
  out->n = 0;
  while (s && *s) {
    const char *nl = strchr(s, '\n');
    int len = nl ? (int)(nl - s) : (int)strlen(s);
    if (out->n == cap) {
      cap *= 2;
      out->p = realloc(out->p, (size_t)cap * sizeof *out->p);
      out->len = realloc(out->len, (size_t)cap * sizeof *out->len);
      if (!out->p || !out->len)
        abort();
    }
    out->p[out->n] = s;
    out->len[out->n++] = len;
    s += len + (nl ? 1 : 0);
  }
}

static bool same(const lines *a, int i, const lines *b, int j) {
  return a->len[i] == b->len[j] && !memcmp(a->p[i], b->p[j], (size_t)a->len[i]);
}

static json_t *line(char op, const char *p, int len) {
  char o[2] = {op, 0};
  return json_pack("[s,o]", o, ks_report_str(p, (size_t)len));
}

/* One entry per line of the whole edit script: op and the line. */
typedef struct edit {
  char op;
  const char *p;
  int len;
} edit;

json_t *ks_report_diff(const char *a, const char *b, int context,
                       int max_lines) {
  lines A, B;
  split_lines(a, &A);
  split_lines(b, &B);
  int head = 0;
  while (head < A.n && head < B.n && same(&A, head, &B, head))
    head++;
  int tail = 0;
  while (tail < A.n - head && tail < B.n - head &&
         same(&A, A.n - 1 - tail, &B, B.n - 1 - tail))
    tail++;
  int n = A.n - head - tail, m = B.n - head - tail;
  json_t *out = NULL;
  if (n > max_lines || m > max_lines)
    goto done;
  /* L[i][j] = LCS length of A[head+i..] and B[head+j..] */
  size_t w = (size_t)m + 1;
  int *L = ks_xcalloc(((size_t)n + 1) * w, sizeof *L);
  for (int i = n - 1; i >= 0; i--)
    for (int j = m - 1; j >= 0; j--)
      L[(size_t)i * w + (size_t)j] =
          same(&A, head + i, &B, head + j)
              ? L[(size_t)(i + 1) * w + (size_t)(j + 1)] + 1
              : (L[(size_t)(i + 1) * w + (size_t)j] >
                         L[(size_t)i * w + (size_t)(j + 1)]
                     ? L[(size_t)(i + 1) * w + (size_t)j]
                     : L[(size_t)i * w + (size_t)(j + 1)]);
  size_t cap = (size_t)A.n + (size_t)B.n + 1, ne = 0;
  edit *e = ks_xmalloc(cap * sizeof *e);
  for (int i = 0; i < head; i++)
    e[ne++] = (edit){' ', A.p[i], A.len[i]};
  int i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && same(&A, head + i, &B, head + j)) {
      e[ne++] = (edit){' ', A.p[head + i], A.len[head + i]};
      i++, j++;
    } else if (i < n && (j == m || L[(size_t)(i + 1) * w + (size_t)j] >=
                                       L[(size_t)i * w + (size_t)(j + 1)])) {
      e[ne++] = (edit){'-', A.p[head + i], A.len[head + i]};
      i++;
    } else {
      e[ne++] = (edit){'+', B.p[head + j], B.len[head + j]};
      j++;
    }
  }
  for (int k = A.n - tail; k < A.n; k++)
    e[ne++] = (edit){' ', A.p[k], A.len[k]};
  free(L);
  out = json_array();
  if (n == 0 && m == 0) { /* identical: no hunk */
    free(e);
    goto done;
  }
  /* keep changed lines and `context` lines around them */
  size_t k = 0;
  while (k < ne) {
    if (e[k].op != ' ') {
      json_array_append_new(out, line(e[k].op, e[k].p, e[k].len));
      k++;
      continue;
    }
    size_t r = k;
    while (r < ne && e[r].op == ' ')
      r++;
    /* unchanged run [k, r): keep context after a change and before one */
    size_t keep_head = k > 0 ? (size_t)context : 0;
    size_t keep_tail = r < ne ? (size_t)context : 0;
    if (keep_head + keep_tail + 1 >= r - k) {
      for (size_t x = k; x < r; x++)
        json_array_append_new(out, line(' ', e[x].p, e[x].len));
    } else {
      for (size_t x = k; x < k + keep_head; x++)
        json_array_append_new(out, line(' ', e[x].p, e[x].len));
      char msg[64];
      snprintf(msg, sizeof msg, "%zu unchanged lines",
               r - k - keep_head - keep_tail);
      json_array_append_new(out, line('~', msg, (int)strlen(msg)));
      for (size_t x = r - keep_tail; x < r; x++)
        json_array_append_new(out, line(' ', e[x].p, e[x].len));
    }
    k = r;
  }
  free(e);
done:
  free(A.p);
  free(A.len);
  free(B.p);
  free(B.len);
  return out;
}
