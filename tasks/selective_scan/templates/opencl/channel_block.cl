// ksearch: backend=opencl entry=selective_scan
// ksearch: family=channel_block
// ksearch: concepts=shared_memory_tiling,state_in_registers,row_blocking
// ksearch: param DBLOCK in 32,16,64,8
// ksearch: param TCHUNK in 64,128,256,32
// ksearch: param EXP in 0,1
// ksearch: launch global=(cdiv(dim, DBLOCK)*DBLOCK, batch) local=(DBLOCK, 1)
//
// OpenCL template for tasks/selective_scan (Mamba-1), family channel_block:
// a work-group is DBLOCK channels of one batch. B[b] and C[b] are shared by
// every channel, so the work-group loads a TCHUNK-step tile of both into
// local memory, transposed to [t][n] so one vload16 gives all 16 state
// entries of a step; each work-item then advances its channel's 16-wide
// state, held as one float16 in registers, through the tile.
//   DBLOCK channels per work-group (work-items)
//   TCHUNK time steps per local-memory tile (2 x 64 x TCHUNK bytes)
//   EXP    0: built-in exp; 1: polynomial exp in float16 arithmetic

#define DSTATE 16
#ifndef DBLOCK
#define DBLOCK 32
#endif
#ifndef TCHUNK
#define TCHUNK 64
#endif

#ifndef EXP
#define EXP 0
#endif
// EXP=1: exp of the 16 decays as a Cephes-style polynomial (range reduction
// by ln 2, degree-6 polynomial, ~2 ulp; 0 below -87.3) in float16 vector
// arithmetic, which vectorizes on any device; EXP=0: the built-in exp.
#if EXP
inline float16 exp16(float16 x) {
  float16 xc = clamp(x, -87.33654f, 88.0f);
  float16 kf = rint(xc * 1.44269504088896341f);
  float16 r = xc - kf * 0.693359375f;
  r = r - kf * -2.12194440e-4f;
  float16 p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  float16 res = p * as_float16((convert_int16(kf) + 127) << 23);
  return x < -87.33654f ? (float16)(0.0f) : res;
}
#else
#define exp16 exp
#endif

inline float hsum16(float16 v) {
  float8 a = v.lo + v.hi;
  float4 b = a.lo + a.hi;
  float2 c = b.lo + b.hi;
  return c.x + c.y;
}

__kernel __attribute__((reqd_work_group_size(DBLOCK, 1, 1))) void
selective_scan(__global const float *u, __global const float *delta,
               __global const float *A, __global const float *B,
               __global const float *C, __global const float *D,
               __global const float *z, __global float *out, long batch,
               long dim, long seqlen, int delta_softplus) {
  __local float Bs[TCHUNK * DSTATE], Cs[TCHUNK * DSTATE];
  uint lid = get_local_id(0);
  long d = get_global_id(0), b = get_global_id(1);
  bool live = d < dim; // the last group may have channels to spare
  long row = (b * dim + (live ? d : 0)) * seqlen;
  __global const float *Bb = B + b * DSTATE * seqlen;
  __global const float *Cb = C + b * DSTATE * seqlen;
  float16 a = vload16(0, A + (live ? d : 0) * DSTATE);
  float16 h = (float16)(0.0f);
  float dd = D[live ? d : 0];
  for (long t0 = 0; t0 < seqlen; t0 += TCHUNK) {
    int len = (int)min((long)TCHUNK, seqlen - t0);
    // the tile: element (n, t) of B[b] goes to Bs[t * 16 + n]
    for (int k = lid; k < DSTATE * TCHUNK; k += DBLOCK) {
      int n = k / TCHUNK, t = k % TCHUNK;
      bool in = t < len;
      Bs[t * DSTATE + n] = in ? Bb[n * seqlen + t0 + t] : 0.0f;
      Cs[t * DSTATE + n] = in ? Cb[n * seqlen + t0 + t] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; live && t < len; t++) {
      long i = row + t0 + t;
      float dt = delta[i];
      if (delta_softplus)
        dt = dt > 20.0f ? dt : log1p(exp(dt));
      float ut = u[i];
      h = exp16(dt * a) * h + (dt * ut) * vload16(t, Bs);
      float y = hsum16(h * vload16(t, Cs)) + dd * ut;
      float zt = z[i];
      out[i] = y * (zt / (1.0f + exp(-zt)));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
