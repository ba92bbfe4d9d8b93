// flash_attn.cu — flash-attention-style decoding kernel, written for
// ksearch's tests. One query per (batch*head); the key/value sequence is cut
// into num_splits chunks (split-KV, "flash-decoding"), one block per
// (head, split). A block stages K and V tiles in shared memory (cp.async on
// sm_80+), scores them with warp-shuffle dot products, keeps an online
// softmax (running max m, running sum l, rescaled output), and writes a
// partial (o, m, l); combine_splits merges the partials.
#include <cuda_runtime.h>
#include <float.h>

#define HEAD_DIM 64
#define TILE_KV 32
#define WARPS 4
#define THREADS (WARPS * 32)

__device__ __forceinline__ void cp_async_f4(float *smem, const float *gmem) {
#if __CUDA_ARCH__ >= 800
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s),
               "l"(gmem));
#else
  *(float4 *)smem = *(const float4 *)gmem;
#endif
}

__device__ __forceinline__ void cp_async_wait_all() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::);
#endif
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void __launch_bounds__(THREADS)
    attn_decode_split(const float *__restrict__ q, const float *__restrict__ k,
                      const float *__restrict__ v, float *__restrict__ o_partial,
                      float *__restrict__ m_partial,
                      float *__restrict__ l_partial, int seq_len,
                      int num_splits, float scale) {
  __shared__ __align__(16) float Ks[TILE_KV][HEAD_DIM];
  __shared__ __align__(16) float Vs[TILE_KV][HEAD_DIM];
  __shared__ float scores[TILE_KV];
  int bh = blockIdx.x, split = blockIdx.y;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int chunk = (seq_len + num_splits - 1) / num_splits;
  int kv_begin = split * chunk;
  int kv_end = min(seq_len, kv_begin + chunk);
  const float *qh = q + bh * HEAD_DIM;
  const float *kh = k + (size_t)bh * seq_len * HEAD_DIM;
  const float *vh = v + (size_t)bh * seq_len * HEAD_DIM;
  float q0 = qh[lane] * scale, q1 = qh[lane + 32] * scale;
  float m_i = -FLT_MAX, l_i = 0.0f;
  float acc = 0.0f; // output dimension threadIdx.x (threads below HEAD_DIM)
  for (int t0 = kv_begin; t0 < kv_end; t0 += TILE_KV) {
    int n = min(TILE_KV, kv_end - t0);
    for (int e = threadIdx.x * 4; e < n * HEAD_DIM; e += THREADS * 4) {
      cp_async_f4(&Ks[0][0] + e, kh + (size_t)t0 * HEAD_DIM + e);
      cp_async_f4(&Vs[0][0] + e, vh + (size_t)t0 * HEAD_DIM + e);
    }
    cp_async_wait_all();
    __syncthreads();
    // every warp runs every round (rows past n score 0), so that the
    // warps meet the same shuffles the same number of times
    for (int j0 = 0; j0 < TILE_KV; j0 += WARPS) {
      int j = j0 + warp;
      float part = j < n ? q0 * Ks[j][lane] + q1 * Ks[j][lane + 32] : 0.0f;
      float s = warp_sum(part);
      if (lane == 0 && j < n)
        scores[j] = s;
    }
    __syncthreads();
    float m_new = m_i;
    for (int j = 0; j < n; j++)
      m_new = fmaxf(m_new, scores[j]);
    float alpha = __expf(m_i - m_new);
    l_i *= alpha;
    acc *= alpha;
    for (int j = 0; j < n; j++) {
      float p = __expf(scores[j] - m_new);
      l_i += p;
      if (threadIdx.x < HEAD_DIM)
        acc += p * Vs[j][threadIdx.x];
    }
    m_i = m_new;
    __syncthreads();
  }
  int out = bh * num_splits + split;
  if (threadIdx.x < HEAD_DIM)
    o_partial[out * HEAD_DIM + threadIdx.x] = acc;
  if (threadIdx.x == 0) {
    m_partial[out] = m_i;
    l_partial[out] = l_i;
  }
}

// o = sum_s o_s * exp(m_s - m) / sum_s l_s * exp(m_s - m)
__global__ void combine_splits(const float *__restrict__ o_partial,
                               const float *__restrict__ m_partial,
                               const float *__restrict__ l_partial,
                               float *__restrict__ o, int num_splits) {
  int bh = blockIdx.x, d = threadIdx.x;
  float m = -FLT_MAX;
  for (int s = 0; s < num_splits; s++)
    m = fmaxf(m, m_partial[bh * num_splits + s]);
  float l = 0.0f, acc = 0.0f;
  for (int s = 0; s < num_splits; s++) {
    float w = __expf(m_partial[bh * num_splits + s] - m);
    l += l_partial[bh * num_splits + s] * w;
    acc += o_partial[(bh * num_splits + s) * HEAD_DIM + d] * w;
  }
  o[bh * HEAD_DIM + d] = acc / l;
}

void attn_decode(const float *q, const float *k, const float *v, float *o,
                 float *o_partial, float *m_partial, float *l_partial,
                 int batch_heads, int seq_len, int num_splits, float scale) {
  dim3 grid(batch_heads, num_splits);
  attn_decode_split<<<grid, THREADS>>>(q, k, v, o_partial, m_partial,
                                       l_partial, seq_len, num_splits, scale);
  combine_splits<<<batch_heads, HEAD_DIM>>>(o_partial, m_partial, l_partial, o,
                                            num_splits);
}
