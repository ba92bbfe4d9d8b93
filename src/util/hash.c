/* hash.c — FNV-1a 64-bit hashing for content-addressed caches (builds,
 * reference outputs) and candidate identity. Not cryptographic: a collision
 * would only reuse a cached build, and inputs are the user's own files. */
#include "util/util.h"

#include <string.h>

uint64_t ks_hash64(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data;
  uint64_t h = 1469598103934665603ULL ^ (seed * 0x9E3779B97F4A7C15ULL);
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  /* final avalanche so that similar inputs spread over the whole range */
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

uint64_t ks_hash_str(const char *s, uint64_t seed) {
  return ks_hash64(s, strlen(s), seed);
}

void ks_hash_hex(uint64_t h, char out[17]) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 15; i >= 0; i--) {
    out[i] = hex[h & 15];
    h >>= 4;
  }
  out[16] = 0;
}
