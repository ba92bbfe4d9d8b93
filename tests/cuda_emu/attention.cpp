// attention.cpp — CPU-emulation check of an attention_prefill CUDA kernel
// (tests/cuda_emu/run.sh): causal GQA attention against a double-precision
// reference, the task's bf16 tolerance. Geometry: MMA (mma_flash), WGMMA
// (wgmma_flash), BASE (the baseline), MLXK (an MLX body, KS_KERNEL, its
// launch from ksmlx.py geometry) or the warp families.
// Args: batch heads_q heads_kv seqlen head_dim.
#include KFILE
#ifdef MLXK
using namespace mlx::core::cu;
#endif
#include <random>
int main(int argc, char **argv) {
  long B = atol(argv[1]), Hq = atol(argv[2]), Hk = atol(argv[3]),
       S = atol(argv[4]), D = atol(argv[5]);
  std::mt19937 rng(2);
  std::normal_distribution<float> nd;
  std::vector<__nv_bfloat16> q(B * Hq * S * D), k(B * Hk * S * D),
      v(B * Hk * S * D), o(B * Hq * S * D, __nv_bfloat16{0x7fc0});
  emu_fill(q, nd, rng);
  emu_fill(k, nd, rng);
  emu_fill(v, nd, rng);
  dim3 g, bl;
  size_t smem;
#ifdef MLXK
  // an MLX body (run.sh: ksmlx.py source and geometry for these axes)
  g = {MLX_GX, MLX_GY, MLX_GZ};
  bl = {MLX_TX, MLX_TY, MLX_TZ};
  smem = MLX_SMEM;
#elif defined(MMA)
  g = {(unsigned)((S + BQ - 1) / BQ), (unsigned)Hq, (unsigned)B};
  bl.x = THREADS; // the template's: 32 * BQ / (16 * WM)
  smem = (BQ + 4 * BKV) * (D + 8) * 2;
#elif defined(WGMMA)
  g = {(unsigned)((S + 64 * WGS - 1) / (64 * WGS)), (unsigned)Hq, (unsigned)B};
#if PERSIST
  // the header's persistent launch line: min(PERSIST, items) blocks
  g = {(unsigned)std::min<long>(PERSIST, (long)g.x * Hq * B), 1, 1};
#endif
  bl.x = 128 * WGS + 128 * (WS > 0);
  smem = (64 * WGS + 2 * (STAGES + OVERLAP) * BKV) * D * 2 + 1024 +
         16 * (STAGES + OVERLAP) + 16;
#elif defined(BASE)
  g = {(unsigned)((S + 3) / 4), (unsigned)Hq, (unsigned)B};
  bl.x = 128;
  smem = 0;
#else
  g = {(unsigned)((S + WARPS - 1) / WARPS), (unsigned)Hq, (unsigned)B};
  bl.x = 32 * WARPS;
  smem = 4 * WARPS * D + 2 * 2 * 32 * (D + 2);
#endif
#ifdef WGMMA
  // the header's tensor maps as the executor encodes them: q, k, v viewed
  // as (head_dim, rows of every head), boxes of 64 columns, 128B swizzle
  tmap_t tq, tk, tv;
  {
    uint64_t dq[2] = {(uint64_t)D, (uint64_t)(B * Hq * S)},
             dk[2] = {(uint64_t)D, (uint64_t)(B * Hk * S)},
             st[1] = {(uint64_t)D * 2};
    uint32_t bq[2] = {64, 64 * WGS}, bk[2] = {64, BKV};
    if (!emu_tmap_encode(&tq, 2, 2, q.data(), dq, st, bq, 128) ||
        !emu_tmap_encode(&tk, 2, 2, k.data(), dk, st, bk, 128) ||
        !emu_tmap_encode(&tv, 2, 2, v.data(), dk, st, bk, 128))
      return printf("tensor map refused\n"), 1;
  }
  launch(g, bl, smem, [&] {
    attention_prefill(q.data(), k.data(), v.data(), o.data(), B, Hq, Hk, S, D,
                      tq, tk, tv);
  });
#elif defined(MLXK)
  launch(g, bl, smem,
         [&] { KS_KERNEL(q.data(), k.data(), v.data(), o.data()); });
#else
  launch(g, bl, smem, [&] {
    attention_prefill(q.data(), k.data(), v.data(), o.data(), B, Hq, Hk, S, D);
  });
#endif
  long bad = 0;
  double maxe = 0;
  std::vector<double> p(S);
  for (long b = 0; b < B; b++)
    for (long h = 0; h < Hq; h++)
      for (long i = 0; i < S; i++) {
        long gg = h / (Hq / Hk);
        const __nv_bfloat16 *qr = &q[((b * Hq + h) * S + i) * D];
        double mx = -1e300;
        for (long j = 0; j <= i; j++) {
          double s = 0;
          for (long d = 0; d < D; d++)
            s += (double)__bfloat162float(qr[d]) *
                 __bfloat162float(k[((b * Hk + gg) * S + j) * D + d]);
          p[j] = s / sqrt((double)D);
          mx = std::max(mx, p[j]);
        }
        double l = 0;
        for (long j = 0; j <= i; j++) {
          p[j] = exp(p[j] - mx);
          l += p[j];
        }
        for (long d = 0; d < D; d++) {
          double acc = 0;
          for (long j = 0; j <= i; j++)
            acc += p[j] * __bfloat162float(v[((b * Hk + gg) * S + j) * D + d]);
          float ref = __bfloat162float(__float2bfloat16_rn((float)(acc / l))),
                got = __bfloat162float(o[((b * Hq + h) * S + i) * D + d]);
          double e = fabs(ref - got);
          if (!(e <= 0.01 + 0.01 * fabs(ref))) {
            if (bad < 5)
              printf("bad b%ld h%ld i%ld d%ld ref %f got %f\n", b, h, i, d, ref,
                     got);
            bad++;
          }
          if (e > maxe)
            maxe = e;
        }
      }
  printf("B%ld Hq%ld Hk%ld S%ld D%ld: bad %ld max err %g\n", B, Hq, Hk, S, D,
         bad, maxe);
  return bad != 0;
}
