// ksearch: backend=c entry=selective_scan
// Hand-written fast Mamba-1 selective scan for tasks/selective_scan, used by
// tests as a known-good, known-fast candidate.
// - The (batch, dim) rows are split into one contiguous range per OpenMP
//   thread. Time is cut into blocks of TBLOCK steps; for each block a thread
//   transposes B and C to [t][n] in its own small buffer, so the 16 values a
//   time step needs are one contiguous vector, shared by all of its rows of
//   that batch, each carrying its 16-wide state from block to block.
// - Inside a row, time goes in chunks of TCHUNK: softplus and dt*u are
//   vectorized over the chunk, exp(dt*A) and dt*B*u over n, the recurrence
//   is one 16-wide multiply-add per step, and the D skip term and the silu
//   gate are vectorized over the chunk again.
// - exp/log are branch-free polynomials (Cephes) so they vectorize without
//   -ffast-math; NaN inputs still give NaN outputs.
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DSTATE 16
#define TCHUNK 64
#define TBLOCK 256

// exp(x) to ~2 ulp for x <= 88; 0 below the float normal range.
static inline float exp_ps(float x) {
  float xc = x < -87.33654f ? -87.33654f : x;
  xc = xc > 88.0f ? 88.0f : xc;
  float kf = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - kf * 0.693359375f;
  r = r - kf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = ((int32_t)kf + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float res = p * scale;
  // A multiply, not a select: keeps callers branch-free (and NaN * 0 = NaN).
  return res * (float)(x >= -87.33654f);
}

// log(x) for finite x >= 1 (Cephes logf), ~1 ulp.
static inline float log_ge1(float x) {
  int32_t bits;
  memcpy(&bits, &x, sizeof bits);
  float e = (float)(((bits >> 23) & 0xff) - 126);
  int32_t mb = (bits & 0x807fffff) | 0x3f000000; // mantissa in [0.5, 1)
  float m;
  memcpy(&m, &mb, sizeof m);
  int small = m < 0.707106781186547524f;
  e = small ? e - 1.0f : e;
  m = small ? m + m - 1.0f : m - 1.0f;
  float z = m * m;
  float p = 7.0376836292e-2f;
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  float yv = p * m * z;
  yv = yv + e * -2.12194440e-4f;
  yv = yv - 0.5f * z;
  return m + yv + e * 0.693359375f;
}

// softplus(v) = v > 20 ? v : log1p(exp(v)); log1p via log(1+e)*e/((1+e)-1),
// which keeps full relative accuracy when exp(v) is tiny. Both sides of each
// select are computed so the loop that calls this stays branch-free.
static inline float softplus_ps(float v) {
  float e = exp_ps(v > 20.0f ? 20.0f : v);
  float w = 1.0f + e;
  float ratio = e / (w - 1.0f); // inf/NaN when w == 1; not selected then
  float lw = log_ge1(w) * ratio;
  float l = w == 1.0f ? e : lw;
  return v > 20.0f ? v : l;
}

// Steps [t0, t1) of one (b, d) row; hstate is the row's state, carried
// between calls. Bt/Ct hold B and C of this batch as [t - tb][n] for the
// block that starts at step tb.
static void scan_row(const float *restrict u, const float *restrict delta,
                     const float *restrict Ad, const float *restrict Bt,
                     const float *restrict Ct, int64_t tb, float Dd,
                     const float *restrict z, float *restrict out,
                     float *restrict hstate, int64_t t0, int64_t t1,
                     int32_t sp) {
  float h[DSTATE], a[DSTATE];
  for (int n = 0; n < DSTATE; n++) {
    h[n] = hstate[n];
    a[n] = Ad[n];
  }
  float dt[TCHUNK], dtu[TCHUNK], yv[TCHUNK];
  float da[TCHUNK * DSTATE], dbu[TCHUNK * DSTATE];
  for (int64_t tc = t0; tc < t1; tc += TCHUNK) {
    int nt = t1 - tc < TCHUNK ? (int)(t1 - tc) : TCHUNK;
    const float *bc = Bt + (tc - tb) * DSTATE;
    const float *cc = Ct + (tc - tb) * DSTATE;
    if (sp) {
#pragma omp simd
      for (int i = 0; i < nt; i++) {
        float d = softplus_ps(delta[tc + i]);
        dt[i] = d;
        dtu[i] = d * u[tc + i];
      }
    } else {
#pragma omp simd
      for (int i = 0; i < nt; i++) {
        dt[i] = delta[tc + i];
        dtu[i] = delta[tc + i] * u[tc + i];
      }
    }
    // Everything that does not depend on the state, vectorized over n.
    for (int i = 0; i < nt; i++) {
#pragma omp simd
      for (int n = 0; n < DSTATE; n++) {
        da[i * DSTATE + n] = exp_ps(dt[i] * a[n]);
        dbu[i * DSTATE + n] = dtu[i] * bc[i * DSTATE + n];
      }
    }
    // The recurrence: one 16-wide multiply-add per step; da is reused to
    // hold h * C.
    for (int i = 0; i < nt; i++) {
#pragma omp simd
      for (int n = 0; n < DSTATE; n++) {
        h[n] = da[i * DSTATE + n] * h[n] + dbu[i * DSTATE + n];
        da[i * DSTATE + n] = h[n] * cc[i * DSTATE + n];
      }
    }
    for (int i = 0; i < nt; i++) {
      float y = 0.0f;
#pragma omp simd reduction(+ : y)
      for (int n = 0; n < DSTATE; n++)
        y += da[i * DSTATE + n];
      yv[i] = y;
    }
#pragma omp simd
    for (int i = 0; i < nt; i++) {
      float zi = z[tc + i];
      float gate = zi / (1.0f + exp_ps(-zi));
      out[tc + i] = (yv[i] + Dd * u[tc + i]) * gate;
    }
  }
  for (int n = 0; n < DSTATE; n++)
    hstate[n] = h[n];
}

// The rows [r0, r1) of the flattened (batch, dim) index, on one thread and
// with no synchronisation: for each batch it touches, the thread transposes
// B and C one block of TBLOCK steps at a time into its own buffer (L1/L2
// sized) and runs every one of its rows over that block, the rows' states
// waiting in hs between blocks. Each thread transposing for itself costs a
// little duplicated copying but no barriers, which matters when the cores
// are shared and a barrier can wait for a whole scheduler tick.
static void scan_rows(const float *restrict u, const float *restrict delta,
                      const float *restrict A, const float *restrict B,
                      const float *restrict C, const float *restrict D,
                      const float *restrict z, float *restrict out, int64_t dim,
                      int64_t seqlen, int32_t sp, float *restrict hs,
                      int64_t r0, int64_t r1) {
  float bt[TBLOCK * DSTATE], ct[TBLOCK * DSTATE];
  for (int64_t r = r0; r < r1;) {
    int64_t b = r / dim;
    int64_t rend = (b + 1) * dim < r1 ? (b + 1) * dim : r1; // rows of batch b
    const float *Bn = B + b * DSTATE * seqlen;
    const float *Cn = C + b * DSTATE * seqlen;
    for (int64_t tb = 0; tb < seqlen; tb += TBLOCK) {
      int64_t te = seqlen - tb < TBLOCK ? seqlen : tb + TBLOCK;
      for (int n = 0; n < DSTATE; n++)
        for (int64_t t = tb; t < te; t++) {
          bt[(t - tb) * DSTATE + n] = Bn[n * seqlen + t];
          ct[(t - tb) * DSTATE + n] = Cn[n * seqlen + t];
        }
      for (int64_t rr = r; rr < rend; rr++) {
        int64_t d = rr - b * dim;
        int64_t row = rr * seqlen;
        scan_row(u + row, delta + row, A + d * DSTATE, bt, ct, tb, D[d],
                 z + row, out + row, hs + rr * DSTATE, tb, te, sp);
      }
    }
    r = rend;
  }
}

void selective_scan(const float *restrict u, const float *restrict delta,
                    const float *restrict A, const float *restrict B,
                    const float *restrict C, const float *restrict D,
                    const float *restrict z, float *restrict out, int64_t batch,
                    int64_t dim, int64_t seqlen, int32_t delta_softplus) {
  if (batch <= 0 || dim <= 0 || seqlen <= 0)
    return;
  int64_t rows = batch * dim;
  float *hs = calloc((size_t)rows * DSTATE, sizeof(float)); // row states
  if (!hs)
    return;
  if (rows * seqlen <= 16384) {
    // Small problems: even a one-thread OpenMP region costs more.
    scan_rows(u, delta, A, B, C, D, z, out, dim, seqlen, delta_softplus, hs, 0,
              rows);
  } else {
#pragma omp parallel
    {
      int64_t nth = omp_get_num_threads(), me = omp_get_thread_num();
      int64_t r0 = rows * me / nth, r1 = rows * (me + 1) / nth;
      scan_rows(u, delta, A, B, C, D, z, out, dim, seqlen, delta_softplus, hs,
                r0, r1);
    }
  }
  free(hs);
}
