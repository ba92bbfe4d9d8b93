// ksearch: backend=cuda entry=moe_routing
// ksearch: launch kernel=route_select grid=(cdiv(tokens, 128)) block=(128)
// ksearch: launch kernel=route_group grid=(1) block=(256)
//
// Device baseline for tasks/moe_routing on CUDA (DESIGN.md: Evaluation,
// baselines): plain kernels. A thread per token: the full softmax, then topk
// passes of argmax over the experts (ties to the lower expert), weights
// renormalized. Then one block: a thread per expert counts its assignments
// by reading all ids, thread 0 scans the counts, and each expert's thread
// writes its assignments in ascending order.
#include <math.h>

extern "C" __global__ void __launch_bounds__(128)
    route_select(const float *__restrict__ logits, float *__restrict__ weights,
                 int *__restrict__ ids, int *__restrict__ offsets, int *__restrict__ sorted,
                 long tokens, long experts, long topk) {
  (void)offsets, (void)sorted;
  const long t = (long)blockIdx.x * 128 + threadIdx.x;
  if (t >= tokens)
    return;
  const float *row = logits + t * experts;
  float mx = -INFINITY;
  for (long e = 0; e < experts; e++)
    mx = fmaxf(mx, row[e]);
  float s = 0.f;
  for (long e = 0; e < experts; e++)
    s += expf(row[e] - mx);
  float chosen = 0.f;
  for (long j = 0; j < topk; j++) {
    long best = -1;
    for (long e = 0; e < experts; e++) {
      bool taken = false;
      for (long i = 0; i < j; i++)
        taken |= ids[t * topk + i] == (int)e;
      if (!taken && (best < 0 || row[e] > row[best]))
        best = e;
    }
    ids[t * topk + j] = (int)best;
    float p = expf(row[best] - mx) / s;
    weights[t * topk + j] = p;
    chosen += p;
  }
  for (long j = 0; j < topk; j++)
    weights[t * topk + j] /= chosen;
}

extern "C" __global__ void __launch_bounds__(256)
    route_group(const float *__restrict__ logits, float *__restrict__ weights,
                int *__restrict__ ids, int *__restrict__ offsets, int *__restrict__ sorted,
                long tokens, long experts, long topk) {
  (void)logits, (void)weights;
  __shared__ int cnt[1024];
  const long n = tokens * topk;
  if (experts > 1024)
    return;
  for (long e = threadIdx.x; e < experts; e += blockDim.x) {
    int c = 0;
    for (long a = 0; a < n; a++)
      c += ids[a] == (int)e;
    cnt[e] = c;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int run = 0;
    for (long e = 0; e < experts; e++) {
      int c = cnt[e];
      cnt[e] = run;
      offsets[e] = run;
      run += c;
    }
    offsets[experts] = run;
  }
  __syncthreads();
  for (long e = threadIdx.x; e < experts; e += blockDim.x) {
    int pos = cnt[e];
    for (long a = 0; a < n; a++)
      if (ids[a] == (int)e)
        sorted[pos++] = (int)a;
  }
}
