/* dtype.c — element types of task tensors: names, sizes, the C type kernels
 * see, and load/store through double (used by input generation and the
 * correctness check). Half types travel as uint16_t bit patterns so that
 * kernels compile with any C compiler (DESIGN.md: Task). */
#include "ksearch.h"

#include <math.h>
#include <string.h>

static const struct {
  const char *name, *ctype;
  size_t size;
} k_types[KS_DTYPE_COUNT] = {
    [KS_F32] = {"float32", "float", 4},
    [KS_F16] = {"float16", "uint16_t", 2},
    [KS_BF16] = {"bfloat16", "uint16_t", 2},
    [KS_I32] = {"int32", "int32_t", 4},
    [KS_I64] = {"int64", "int64_t", 8},
    [KS_U8] = {"uint8", "uint8_t", 1},
};

const char *ks_dtype_name(ks_dtype t) { return k_types[t].name; }
size_t ks_dtype_size(ks_dtype t) { return k_types[t].size; }
const char *ks_dtype_ctype(ks_dtype t) { return k_types[t].ctype; }
bool ks_dtype_is_float(ks_dtype t) {
  return t == KS_F32 || t == KS_F16 || t == KS_BF16;
}

bool ks_dtype_parse(const char *name, ks_dtype *out) {
  for (int i = 0; i < KS_DTYPE_COUNT; i++)
    if (!strcmp(name, k_types[i].name)) {
      *out = (ks_dtype)i;
      return true;
    }
  return false;
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31,
           man = h & 1023;
  float f;
  if (exp == 0)
    f = ldexpf((float)man, -24);
  else if (exp == 31)
    f = man ? NAN : INFINITY;
  else
    f = ldexpf((float)(man | 1024), (int)exp - 25);
  return sign ? -f : f;
}

static uint16_t float_to_half(float f) {
  /* round to nearest even through the float's bits */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 255) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 255) == 255)
    return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 31)
    return (uint16_t)(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10)
      return (uint16_t)sign;
    man |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1),
             half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1)))
      h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    h++;
  return (uint16_t)(sign | h);
}

double ks_dtype_load(ks_dtype t, const void *base, size_t i) {
  switch (t) {
  case KS_F32: return ((const float *)base)[i];
  case KS_F16: return half_to_float(((const uint16_t *)base)[i]);
  case KS_BF16: {
    uint32_t x = (uint32_t)((const uint16_t *)base)[i] << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
  }
  case KS_I32: return ((const int32_t *)base)[i];
  case KS_I64: return (double)((const int64_t *)base)[i];
  case KS_U8: return ((const uint8_t *)base)[i];
  default: return NAN;
  }
}

void ks_dtype_store(ks_dtype t, void *base, size_t i, double v) {
  switch (t) {
  case KS_F32: ((float *)base)[i] = (float)v; break;
  case KS_F16: ((uint16_t *)base)[i] = float_to_half((float)v); break;
  case KS_BF16: {
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000)
      x = 0x7fc00000; /* keep NaN a NaN */
    else
      x += 0x7fff + ((x >> 16) & 1);
    ((uint16_t *)base)[i] = (uint16_t)(x >> 16);
    break;
  }
  case KS_I32: ((int32_t *)base)[i] = (int32_t)v; break;
  case KS_I64: ((int64_t *)base)[i] = (int64_t)v; break;
  case KS_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
  default: break;
  }
}
