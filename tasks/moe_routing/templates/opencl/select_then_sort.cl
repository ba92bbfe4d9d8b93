// ksearch: backend=opencl entry=moe_routing
// ksearch: family=select_then_sort
// ksearch: concepts=thread_parallel
// ksearch: param LOCAL in 64,16,256
// ksearch: launch kernel=route_select global=(tokens) local=(LOCAL)
// ksearch: launch kernel=route_sort global=(1) local=(1)
//
// OpenCL template for tasks/moe_routing, family select_then_sort: kernel 1,
// one work-item per token, selects the top-k by insertion (logits compared,
// strictly greater moves up, so equal logits keep the lower expert first)
// and writes ids and weights exp(l - l_top1) / sum over the selected; kernel
// 2, a single work-item, counts per expert, writes the exclusive prefix sums
// and places the assignments in ascending order (a stable counting sort,
// using offsets as cursors and restoring them). Kernels run in order on one
// queue. topk up to MAXK.
//   LOCAL  tokens per work-group of kernel 1
// Kernel arguments follow ksearch's OpenCL convention (docs/DESIGN.md).

#define MAXK 64

__kernel void route_select(__global const float *logits,
                           __global float *weights, __global int *ids,
                           __global int *offsets, __global int *sorted,
                           long tokens, long experts, long topk) {
  long t = get_global_id(0);
  if (t >= tokens || topk > MAXK || topk > experts)
    return;
  __global const float *l = logits + t * experts;
  float val[MAXK];
  int id[MAXK];
  long n = 0;
  for (long x = 0; x < experts; x++) {
    float v = l[x];
    if (n == topk && !(v > val[topk - 1]))
      continue;
    long p = n < topk ? n++ : topk - 1;
    while (p > 0 && v > val[p - 1]) {
      val[p] = val[p - 1];
      id[p] = id[p - 1];
      p--;
    }
    val[p] = v;
    id[p] = (int)x;
  }
  float sum = 0.0f, w[MAXK];
  for (long s = 0; s < topk; s++) {
    w[s] = exp(val[s] - val[0]);
    sum += w[s];
  }
  for (long s = 0; s < topk; s++) {
    ids[t * topk + s] = id[s];
    weights[t * topk + s] = w[s] / sum;
  }
}

__kernel void route_sort(__global const float *logits, __global float *weights,
                         __global int *ids, __global int *offsets,
                         __global int *sorted, long tokens, long experts,
                         long topk) {
  if (get_global_id(0) != 0)
    return;
  long na = tokens * topk;
  for (long e = 0; e <= experts; e++)
    offsets[e] = 0;
  for (long a = 0; a < na; a++)
    offsets[ids[a] + 1]++;
  for (long e = 0; e < experts; e++)
    offsets[e + 1] += offsets[e];
  // offsets[e] serves as expert e's cursor, then is moved back
  for (long a = 0; a < na; a++)
    sorted[offsets[ids[a]]++] = (int)a;
  for (long e = experts; e > 0; e--)
    offsets[e] = offsets[e - 1];
  offsets[0] = 0;
}
