#!/usr/bin/env python3
"""gen_cuda_templates.py — writes tasks/{softmax,rmsnorm,layernorm}{,_bf16}/
templates/cuda/*.cu (DESIGN.md: Task, templates): three families per task
(block_row: a block per row, shared-memory tree; warp_row: a warp per row;
rows_per_block: several rows per block, a few threads per row), each with
128-bit loads and the row held in registers when it fits. The families share
their row bodies, so they are generated from one text here; the outputs are
committed (a candidate is one self-contained file). Run from the repo root:
python3 scripts/gen_cuda_templates.py
"""
import os

PRELUDE = r'''
#include <cuda_bf16.h>
#include <math.h>
#ifndef EXP
#define EXP 1
#endif
#ifndef PLAIN
#define PLAIN 0
#endif
#if IO_BF16
typedef __nv_bfloat16 T;
#else
typedef float T;
#endif
// elements per 128-bit access
#define E ((int)(16 / sizeof(T)))
__device__ __forceinline__ float ldf(const T *p) {
#if IO_BF16
  return __bfloat162float(*p);
#else
  return *p;
#endif
}
__device__ __forceinline__ void stf(T *p, float v) {
#if IO_BF16
  *p = __float2bfloat16_rn(v);
#else
  *p = v;
#endif
}
// one 16-byte chunk <-> E floats
__device__ __forceinline__ void ld16(const T *p, float *v) {
#if IO_BF16
  uint4 u = __ldg((const uint4 *)p);
  const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    float2 f = __bfloat1622float2(h[i]);
    v[2 * i] = f.x;
    v[2 * i + 1] = f.y;
  }
#else
  float4 f = __ldg((const float4 *)p);
  v[0] = f.x; v[1] = f.y; v[2] = f.z; v[3] = f.w;
#endif
}
__device__ __forceinline__ void st16(T *p, const float *v) {
#if IO_BF16
  uint4 u;
  __nv_bfloat162 *h = (__nv_bfloat162 *)&u;
#pragma unroll
  for (int i = 0; i < 4; i++)
    h[i] = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);
  *(uint4 *)p = u;
#else
  *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]);
#endif
}
__device__ __forceinline__ float fexp(float x) {
#if EXP
  return __expf(x);
#else
  return expf(x);
#endif
}
'''

# ---- families: how rows map to threads, and the group reduction
FAMILIES = {
    'block_row': dict(
        doc='one block per row; warp shuffles, then a tree over the warps in '
            'shared memory',
        params=['param BLOCK in 512,256,1024,128', 'param MAXV in 4,8,2,16',
                'param EXP in 1,0'],
        launch='grid=(rows) block=(BLOCK)',
        code=r'''
#ifndef BLOCK
#define BLOCK 512
#endif
#ifndef MAXV
#define MAXV 4
#endif
#define GROUP BLOCK
#define ROW_SETUP                                                              \
  __shared__ float red_sh[32];                                                 \
  const long row = blockIdx.x;                                                 \
  const int gid = threadIdx.x;                                                 \
  const bool ok = true;
__device__ __forceinline__ float group_reduce(float v, int is_max,
                                              float *sh) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  if ((threadIdx.x & 31) == 0)
    sh[threadIdx.x >> 5] = v;
  __syncthreads();
  const int nw = BLOCK / 32;
  v = (threadIdx.x & 31) < nw ? sh[threadIdx.x & 31] : (is_max ? -INFINITY : 0.f);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  __syncthreads(); // sh is free again
  return v;
}
#define LB __launch_bounds__(BLOCK)
'''),
    'warp_row': dict(
        doc='one warp per row, WARPS rows per block; reductions are warp '
            'shuffles only (no shared memory, no barriers)',
        params=['param WARPS in 4,8,2,16', 'param MAXV in 8,4,16,2',
                'param EXP in 1,0'],
        launch='grid=(rows / WARPS) block=(32 * WARPS)',
        code=r'''
#ifndef WARPS
#define WARPS 4
#endif
#ifndef MAXV
#define MAXV 8
#endif
#define GROUP 32
#define ROW_SETUP                                                              \
  float *red_sh = 0;                                                           \
  const long row = (long)blockIdx.x * WARPS + (threadIdx.x >> 5);              \
  const int gid = threadIdx.x & 31;                                            \
  if (row >= rows) /* a whole warp: nothing it shuffles with is left */        \
    return;                                                                    \
  const bool ok = true;
__device__ __forceinline__ float group_reduce(float v, int is_max, float *) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  return v;
}
#define LB __launch_bounds__(32 * WARPS)
'''),
    'rows_per_block': dict(
        doc='several rows per block: TPR threads per row (a slice of a warp),'
            ' BLOCK/TPR rows per block, 128-bit loads; for short rows',
        params=['param TPR in 8,4,16,2', 'param BLOCK in 256,128,512',
                'param MAXV in 4,8,2,16', 'param EXP in 1,0'],
        launch='grid=(rows * TPR / BLOCK) block=(BLOCK)',
        code=r'''
#ifndef TPR
#define TPR 8
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef MAXV
#define MAXV 4
#endif
#define GROUP TPR
/* rows past the end keep shuffling (full-warp masks) but load and store
 * nothing */
#define ROW_SETUP                                                              \
  float *red_sh = 0;                                                           \
  const long row0 = (long)blockIdx.x * (BLOCK / TPR) + threadIdx.x / TPR;      \
  const int gid = threadIdx.x % TPR;                                           \
  const bool ok = row0 < rows;                                                 \
  const long row = ok ? row0 : 0;
__device__ __forceinline__ float group_reduce(float v, int is_max, float *) {
#pragma unroll
  for (int o = TPR / 2; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(0xffffffffu, v, o, TPR);
    v = is_max ? fmaxf(v, u) : v + u;
  }
  return v;
}
#define LB __launch_bounds__(BLOCK)
'''),
}

# ---- task bodies. The row: xr (input), yr (output). vec: 16-byte chunks
# (cols a multiple of E: every row then starts 16-byte aligned); cached: the
# whole row fits in MAXV chunks per thread, read once.
COMMON_HEAD = r'''
  ROW_SETUP
  const T *xr = x + row * cols;
  T *yr = y + row * cols;
  const bool vec = cols % E == 0;
  const long nch = cols / E;
  const bool cached = !PLAIN && vec && nch <= (long)GROUP * MAXV;
  float v[MAXV][E];
'''

SOFTMAX = dict(
    sig='(const T *__restrict__ x, T *__restrict__ y, long rows, long cols)',
    body=COMMON_HEAD + r'''
  float m = -INFINITY, s = 0.f;
  if (cached) {
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
      long j = gid + (long)k * GROUP;
      if (ok && j < nch) {
        ld16(xr + j * E, v[k]);
#pragma unroll
        for (int e = 0; e < E; e++)
          m = fmaxf(m, v[k][e]);
      }
    }
    m = group_reduce(m, 1, red_sh);
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
      long j = gid + (long)k * GROUP;
      if (ok && j < nch) {
#pragma unroll
        for (int e = 0; e < E; e++) {
          v[k][e] = fexp(v[k][e] - m);
          s += v[k][e];
        }
      }
    }
    s = group_reduce(s, 0, red_sh);
    float inv = 1.f / s;
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
      long j = gid + (long)k * GROUP;
      if (ok && j < nch) {
#pragma unroll
        for (int e = 0; e < E; e++)
          v[k][e] *= inv;
        st16(yr + j * E, v[k]);
      }
    }
    return;
  }
  // online max and sum in one pass, then the output pass; 16-byte chunks
  // when the rows allow them (several loads in flight per thread)
  if (vec && !PLAIN) {
    for (long j = gid; ok && j < nch; j += GROUP) {
      float xv[E];
      ld16(xr + j * E, xv);
      float cm = xv[0];
#pragma unroll
      for (int e = 1; e < E; e++)
        cm = fmaxf(cm, xv[e]);
      if (cm > m) {
        s = m == -INFINITY ? 0.f : s * fexp(m - cm);
        m = cm;
      }
#pragma unroll
      for (int e = 0; e < E; e++)
        s += fexp(xv[e] - m);
    }
  } else {
    for (long c = gid; ok && c < cols; c += GROUP) {
      float xe = ldf(xr + c);
      if (xe > m) {
        s = s * fexp(m - xe) + 1.f;
        m = xe;
      } else {
        s += fexp(xe - m);
      }
    }
  }
  float mall = group_reduce(m, 1, red_sh);
  s = m == -INFINITY ? 0.f : s * fexp(m - mall);
  s = group_reduce(s, 0, red_sh);
  float inv = 1.f / s;
  if (vec && !PLAIN) {
    for (long j = gid; ok && j < nch; j += GROUP) {
      float xv[E];
      ld16(xr + j * E, xv);
#pragma unroll
      for (int e = 0; e < E; e++)
        xv[e] = fexp(xv[e] - mall) * inv;
      st16(yr + j * E, xv);
    }
    return;
  }
  for (long c = gid; ok && c < cols; c += GROUP)
    stf(yr + c, fexp(ldf(xr + c) - mall) * inv);
''')

RMSNORM = dict(
    sig='(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y, '
        'long rows, long cols, float eps)',
    body=COMMON_HEAD + r'''
  float ss = 0.f;
  if (cached) {
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
      long j = gid + (long)k * GROUP;
      if (ok && j < nch) {
        ld16(xr + j * E, v[k]);
#pragma unroll
        for (int e = 0; e < E; e++)
          ss += v[k][e] * v[k][e];
      }
    }
  } else if (vec && !PLAIN) {
    for (long j = gid; ok && j < nch; j += GROUP) {
      float xv[E];
      ld16(xr + j * E, xv);
#pragma unroll
      for (int e = 0; e < E; e++)
        ss += xv[e] * xv[e];
    }
  } else {
    for (long c = gid; ok && c < cols; c += GROUP) {
      float xe = ldf(xr + c);
      ss += xe * xe;
    }
  }
  ss = group_reduce(ss, 0, red_sh);
  const float rs = rsqrtf(ss / (float)cols + eps);
  if (cached) {
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
      long j = gid + (long)k * GROUP;
      if (ok && j < nch) {
        float wv[E];
        ld16(w + j * E, wv);
#pragma unroll
        for (int e = 0; e < E; e++)
          v[k][e] = v[k][e] * rs * wv[e];
        st16(yr + j * E, v[k]);
      }
    }
    return;
  }
  if (vec && !PLAIN) {
    for (long j = gid; ok && j < nch; j += GROUP) {
      float xv[E], wv[E];
      ld16(xr + j * E, xv);
      ld16(w + j * E, wv);
#pragma unroll
      for (int e = 0; e < E; e++)
        xv[e] = xv[e] * rs * wv[e];
      st16(yr + j * E, xv);
    }
    return;
  }
  for (long c = gid; ok && c < cols; c += GROUP)
    stf(yr + c, ldf(xr + c) * rs * ldf(w + c));
''')

LAYERNORM = dict(
    sig='(const T *__restrict__ x, const T *__restrict__ w, '
        'const T *__restrict__ b, T *__restrict__ y, long rows, long cols, '
        'float eps)',
    body=COMMON_HEAD + r'''
  float mean, var;
  if (cached) { // exact two passes over the registers
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
      long j = gid + (long)k * GROUP;
      if (ok && j < nch) {
        ld16(xr + j * E, v[k]);
#pragma unroll
        for (int e = 0; e < E; e++)
          s += v[k][e];
      }
    }
    mean = group_reduce(s, 0, red_sh) / (float)cols;
    float q = 0.f;
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
      long j = gid + (long)k * GROUP;
      if (ok && j < nch) {
#pragma unroll
        for (int e = 0; e < E; e++) {
          float d = v[k][e] - mean;
          q += d * d;
        }
      }
    }
    var = group_reduce(q, 0, red_sh) / (float)cols;
  } else { // one pass, shifted by the row's first element (no cancellation)
    const float K = ok ? ldf(xr) : 0.f;
    float s = 0.f, q = 0.f;
    if (vec && !PLAIN) {
      for (long j = gid; ok && j < nch; j += GROUP) {
        float xv[E];
        ld16(xr + j * E, xv);
#pragma unroll
        for (int e = 0; e < E; e++) {
          float d = xv[e] - K;
          s += d;
          q += d * d;
        }
      }
    } else {
      for (long c = gid; ok && c < cols; c += GROUP) {
        float d = ldf(xr + c) - K;
        s += d;
        q += d * d;
      }
    }
    s = group_reduce(s, 0, red_sh) / (float)cols;
    q = group_reduce(q, 0, red_sh) / (float)cols;
    mean = K + s;
    var = fmaxf(q - s * s, 0.f);
  }
  const float rs = rsqrtf(var + eps);
  if (cached) {
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
      long j = gid + (long)k * GROUP;
      if (ok && j < nch) {
        float wv[E], bv[E];
        ld16(w + j * E, wv);
        ld16(b + j * E, bv);
#pragma unroll
        for (int e = 0; e < E; e++)
          v[k][e] = (v[k][e] - mean) * rs * wv[e] + bv[e];
        st16(yr + j * E, v[k]);
      }
    }
    return;
  }
  if (vec && !PLAIN) {
    for (long j = gid; ok && j < nch; j += GROUP) {
      float xv[E], wv[E], bv[E];
      ld16(xr + j * E, xv);
      ld16(w + j * E, wv);
      ld16(b + j * E, bv);
#pragma unroll
      for (int e = 0; e < E; e++)
        xv[e] = (xv[e] - mean) * rs * wv[e] + bv[e];
      st16(yr + j * E, xv);
    }
    return;
  }
  for (long c = gid; ok && c < cols; c += GROUP)
    stf(yr + c, (ldf(xr + c) - mean) * rs * ldf(w + c) + ldf(b + c));
''')

TASKS = {'softmax': SOFTMAX, 'rmsnorm': RMSNORM, 'layernorm': LAYERNORM}


def main():
    for base, spec in TASKS.items():
        for bf16 in (False, True):
            task = base + ('_bf16' if bf16 else '')
            d = os.path.join('tasks', task, 'templates', 'cuda')
            os.makedirs(d, exist_ok=True)
            for fam, f in FAMILIES.items():
                head = ['// ksearch: backend=cuda entry=%s' % task,
                        '// ksearch: family=%s' % fam,
                        '// ksearch: concepts=coalesced_access,vector_loads_128,'
                        'warp_shuffle_reduction,single_pass_cache'
                        + (',block_reduction' if fam == 'block_row' else '')
                        + (',half_bf16_conversion' if bf16 else '')]
                head += ['// ksearch: ' + p for p in f['params']]
                head += ['// ksearch: launch ' + f['launch'],
                         '//',
                         '// CUDA template for tasks/%s, family %s: %s.' %
                         (task, fam, f['doc']),
                         '// %s in and out, float arithmetic. The row stays in '
                         'registers (MAXV 16-byte' % ('bfloat16' if bf16 else 'float32'),
                         '// chunks per thread) when it fits: one read, one '
                         'write; else two reads (16-byte chunks',
                         '// when cols is a multiple of 16 bytes).',
                         '// Generated by scripts/gen_cuda_templates.py.']
                text = '\n'.join(head) + '\n#define IO_BF16 %d\n' % int(bf16)
                text += PRELUDE + f['code']
                text += '\nextern "C" __global__ void LB %s%s {' % (
                    task, spec['sig'])
                text += spec['body'] + '}\n'
                with open(os.path.join(d, fam + '.cu'), 'w') as out:
                    out.write(text)
            # the device baseline: a plain kernel (a block of 256 per row,
            # scalar loads, the row read twice or three times, expf)
            f = FAMILIES['block_row']
            bd = os.path.join('tasks', task, 'baseline')
            os.makedirs(bd, exist_ok=True)
            head = ['// ksearch: backend=cuda entry=%s' % task,
                    '// ksearch: launch grid=(rows) block=(256)',
                    '//',
                    '// Device baseline for tasks/%s on CUDA (DESIGN.md: '
                    'Evaluation, baselines):' % task,
                    '// a plain kernel, one block of 256 threads per row, '
                    'scalar loads, expf,',
                    '// the row read again for the output. Speedups on a GPU '
                    'are measured over it.',
                    '// Generated by scripts/gen_cuda_templates.py.']
            text = '\n'.join(head) + '\n#define IO_BF16 %d\n' % int(bf16)
            text += '#define PLAIN 1\n#define EXP 0\n#define BLOCK 256\n'
            text += '#define MAXV 1\n' + PRELUDE + f['code']
            text += '\nextern "C" __global__ void LB %s%s {' % (task,
                                                              spec['sig'])
            text += spec['body'] + '}\n'
            with open(os.path.join(bd, 'cuda.cu'), 'w') as out:
                out.write(text)


if __name__ == '__main__':
    main()
