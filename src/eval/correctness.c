/* correctness.c — see correctness.h. */
#include "eval/correctness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ks_compare_outputs(const char *name, ks_dtype dt, const void *got,
                        const void *ref, int64_t n, ks_tolerance tol,
                        ks_compare *c) {
  memset(c, 0, sizeof *c);
  c->first_bad = -1;
  double diff2 = 0, ref2 = 0, max_got = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = ks_dtype_load(dt, got, (size_t)i);
    double b = ks_dtype_load(dt, ref, (size_t)i);
    if (isnan(a) && !isnan(b)) {
      c->n_nan++;
      if (c->first_bad < 0)
        c->first_bad = i;
      continue;
    }
    if (isnan(b) && isnan(a))
      continue; /* the reference itself says NaN here */
    double d = fabs(a - b);
    /* an infinity must match exactly: rtol*|inf| would excuse anything */
    bool inf = isinf(a) || isinf(b);
    if (inf)
      d = a == b ? 0 : INFINITY;
    if (d > c->max_abs_err)
      c->max_abs_err = d;
    if (fabs(b) > tol.atol && d / fabs(b) > c->max_rel_err)
      c->max_rel_err = d / fabs(b);
    if (inf ? a != b : !(d <= tol.atol + tol.rtol * fabs(b))) {
      c->n_bad++;
      if (c->first_bad < 0)
        c->first_bad = i;
    }
    if (isfinite(a) && isfinite(b)) { /* ||ref|| = inf disables the norm */
      diff2 += d * d;
      ref2 += b * b;
      if (fabs(a) > max_got)
        max_got = fabs(a);
    }
  }
  c->norm_rel_err =
      ref2 > 0 ? sqrt(diff2 / ref2) : (max_got > 0 ? INFINITY : 0);
  bool norm_ok =
      ref2 > 0 ? sqrt(diff2) <= tol.rtol * sqrt(ref2) : max_got <= tol.atol;
  if (c->n_nan) {
    snprintf(c->reason, sizeof c->reason,
             "output %s: %lld of %lld elements are NaN (first at %lld): "
             "output not written, or NaN-filled output read as input",
             name, (long long)c->n_nan, (long long)n, (long long)c->first_bad);
  } else if (c->n_bad) {
    snprintf(c->reason, sizeof c->reason,
             "output %s: mismatch in %lld of %lld elements (first at %lld; "
             "max abs err %.3g, max rel err %.3g; atol %.3g rtol %.3g)",
             name, (long long)c->n_bad, (long long)n, (long long)c->first_bad,
             c->max_abs_err, c->max_rel_err, tol.atol, tol.rtol);
  } else if (!norm_ok) {
    snprintf(c->reason, sizeof c->reason,
             "output %s: mismatch in norm: ||out-ref||/||ref|| = %.3g > rtol "
             "%.3g",
             name, c->norm_rel_err, tol.rtol);
  } else {
    c->ok = true;
  }
}
