/* rng.c — reproducible random streams for input generation. Inputs for a
 * (task, workload, seed, tensor) must be identical in every process that
 * draws them (the reference runner and each candidate runner), so the
 * generator is a fixed algorithm (splitmix64) seeded from those four values,
 * never rand() or the time. */
#include "util/util.h"

#include <math.h>

void ks_rng_seed(ks_rng *r, uint64_t seed, uint64_t stream) {
  r->s = seed * 0x9E3779B97F4A7C15ULL ^ (stream + 0x632BE59BD9B4E019ULL);
  (void)ks_rng_u64(r);
}

uint64_t ks_rng_u64(ks_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double ks_rng_uniform(ks_rng *r) {
  return (double)(ks_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

double ks_rng_normal(ks_rng *r) {
  /* Box-Muller; one value per call keeps the stream position simple */
  double u1 = ks_rng_uniform(r), u2 = ks_rng_uniform(r);
  if (u1 < 1e-300)
    u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
