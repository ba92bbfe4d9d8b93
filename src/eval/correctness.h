/* correctness.h — comparing a candidate's output with the reference's
 * (DESIGN.md: Evaluation). Two checks, both must pass:
 *   per element  |a-b| <= atol + rtol*|b|   (NaN never passes)
 *   whole output ||a-b||_2 <= rtol*||b||_2  (scaled to the output's
 *                magnitude, so an all-zero or constant output cannot pass
 *                even where atol is generous; when ||b|| = 0, max|a| <= atol)
 */
#ifndef KS_CORRECTNESS_H
#define KS_CORRECTNESS_H

#include "ksearch.h"

typedef struct ks_compare {
  bool ok;
  double max_abs_err, max_rel_err, norm_rel_err;
  int64_t n_nan, n_bad, first_bad;
  char reason[256];
} ks_compare;

void ks_compare_outputs(const char *name, ks_dtype dt, const void *got,
                        const void *ref, int64_t n, ks_tolerance tol,
                        ks_compare *out);

#endif
