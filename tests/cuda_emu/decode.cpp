// decode.cpp — CPU-emulation check of a decode_paged CUDA kernel
// (tests/cuda_emu/run.sh): a shuffled page table, lengths within the last page
// (argument 6 overrides row 0's, e.g. 1 token), against a double reference.
// Geometry: SPLIT or FLASH (two launches, NaN-filled scratch), GROUP, HPW or
// the baseline. Args: batch heads_q heads_kv head_dim max_pages [len0].
#include KFILE
#ifdef MLXK
using namespace mlx::core::cu;
#endif
#include <algorithm>
#include <random>
int main(int argc, char **argv) {
  long B = atol(argv[1]), Hq = atol(argv[2]), Hk = atol(argv[3]),
       D = atol(argv[4]), MP = atol(argv[5]);
  long P = B * MP;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  std::vector<__nv_bfloat16> q(B * Hq * D), kc(P * 16 * Hk * D),
      vc(P * 16 * Hk * D), o(B * Hq * D, __nv_bfloat16{0x7fc0});
  emu_fill(q, nd, rng);
  emu_fill(kc, nd, rng);
  emu_fill(vc, nd, rng);
  std::vector<int> pt(P), lens(B);
  for (long i = 0; i < P; i++)
    pt[i] = i;
  std::shuffle(pt.begin(), pt.end(), rng);
  for (long b = 0; b < B; b++)
    lens[b] = MP * 16 - 15 + rng() % 16;
  if (argc > 6)
    lens[0] = atoi(argv[6]);
  // scratch as the executor leaves it at load: 0xFF bytes (NaN floats;
  // MERGE=1's counters start at 0xFFFFFFFF)
  std::vector<float> scratch(1 << 22);
  memset(scratch.data(), 0xFF, scratch.size() * sizeof(float));
#ifdef SPLIT
  dim3 g1 = {(unsigned)((MP * 16 + SPLIT_TOK - 1) / SPLIT_TOK), (unsigned)Hk,
             (unsigned)B},
       b1 = {32 * WARPS, 1, 1};
  launch(g1, b1, 0, [&] {
    decode_split(q.data(), kc.data(), vc.data(), pt.data(), lens.data(),
                 o.data(), B, Hq, Hk, D, P, MP, scratch.data());
  });
  launch(dim3{(unsigned)Hq, (unsigned)B, 1}, dim3{128, 1, 1}, 0, [&] {
    decode_merge(q.data(), kc.data(), vc.data(), pt.data(), lens.data(),
                 o.data(), B, Hq, Hk, D, P, MP, scratch.data());
  });
#elif defined(FLASH)
  // the template's own launch lines, evaluated for these axes and params by
  // cuda_launch.py (run.sh): L0 = fd_split, L1 = fd_merge (L1_RUN: its
  // when=), SCRATCH bytes exactly
#if !defined(L1_RUN) || !defined(SCRATCH)
#error "FLASH needs the launch macros of cuda_launch.py"
#endif
  std::vector<float> fscratch((SCRATCH + 3) / 4);
  memset(fscratch.data(), 0xFF, fscratch.size() * sizeof(float));
  // MERGE=1 and HEAD_WAIT=1 twice, so a counter left wrong by the first
  // launch fails the second
  for (int rep = 0; rep < 1 + (MERGE || HEAD_WAIT); rep++) {
    std::fill(o.begin(), o.end(), __nv_bfloat16{0x7fc0});
    launch(dim3{L0_GX, L0_GY, L0_GZ}, dim3{L0_BX, L0_BY, L0_BZ}, L0_SMEM, [&] {
      fd_split(q.data(), kc.data(), vc.data(), pt.data(), lens.data(), o.data(),
               B, Hq, Hk, D, P, MP, fscratch.data());
    });
    if (L1_RUN)
      launch(dim3{L1_GX, L1_GY, L1_GZ}, dim3{L1_BX, L1_BY, L1_BZ}, L1_SMEM,
             [&] {
               fd_merge(q.data(), kc.data(), vc.data(), pt.data(), lens.data(),
                        o.data(), B, Hq, Hk, D, P, MP, fscratch.data());
             });
  }
#elif defined(MLXK)
  // MLX fills its outputs, the scratch among them, with init_value -1 on
  // every call (flash_decode's MERGE counters start at 0xFFFFFFFF)
  std::vector<int32_t> ks(MLX_SCRATCH > 0 ? MLX_SCRATCH : 1, -1);
  launch(dim3{MLX_GX, MLX_GY, MLX_GZ}, dim3{MLX_TX, MLX_TY, MLX_TZ}, MLX_SMEM,
         [&] {
           KS_KERNEL(q.data(), kc.data(), vc.data(), pt.data(), lens.data(),
                     o.data()
#if MLX_SCRATCH > 0
                         ,
                     ks.data()
#endif
           );
         });
#elif defined(GROUP)
  launch(dim3{(unsigned)Hk, (unsigned)B, 1}, dim3{32 * WARPS, 1, 1}, 0, [&] {
    decode_paged(q.data(), kc.data(), vc.data(), pt.data(), lens.data(),
                 o.data(), B, Hq, Hk, D, P, MP);
  });
#elif defined(HPW)
  launch(dim3{(unsigned)((B * Hq + WARPS - 1) / WARPS), 1, 1},
         dim3{32 * WARPS, 1, 1}, 0, [&] {
           decode_paged(q.data(), kc.data(), vc.data(), pt.data(), lens.data(),
                        o.data(), B, Hq, Hk, D, P, MP);
         });
#else
  launch(dim3{(unsigned)(B * Hq), 1, 1}, dim3{32, 1, 1}, 0, [&] {
    decode_paged(q.data(), kc.data(), vc.data(), pt.data(), lens.data(),
                 o.data(), B, Hq, Hk, D, P, MP);
  });
#endif
  long bad = 0;
  double maxe = 0;
  for (long b = 0; b < B; b++)
    for (long h = 0; h < Hq; h++) {
      long gg = h / (Hq / Hk), L = lens[b];
      std::vector<double> p(L);
      double mx = -1e300;
      for (long t = 0; t < L; t++) {
        long row = ((long)pt[b * MP + t / 16] * 16 + t % 16) * Hk + gg;
        double s = 0;
        for (long d = 0; d < D; d++)
          s += (double)__bfloat162float(q[(b * Hq + h) * D + d]) *
               __bfloat162float(kc[row * D + d]);
        p[t] = s / sqrt((double)D);
        mx = std::max(mx, p[t]);
      }
      double l = 0;
      for (auto &x : p) {
        x = exp(x - mx);
        l += x;
      }
      for (long d = 0; d < D; d++) {
        double acc = 0;
        for (long t = 0; t < L; t++) {
          long row = ((long)pt[b * MP + t / 16] * 16 + t % 16) * Hk + gg;
          acc += p[t] * __bfloat162float(vc[row * D + d]);
        }
        // no cached token: no softmax, the task's output is 0
        float ref = __bfloat162float(
                  __float2bfloat16_rn(L > 0 ? (float)(acc / l) : 0.f)),
              got = __bfloat162float(o[(b * Hq + h) * D + d]);
        double e = fabs(ref - got);
        if (!(e <= 0.01 + 0.01 * fabs(ref))) {
          if (bad < 5)
            printf("bad b%ld h%ld d%ld ref %f got %f\n", b, h, d, ref, got);
          bad++;
        }
        if (e > maxe)
          maxe = e;
      }
    }
  printf("B%ld Hq%ld Hk%ld D%ld MP%ld: bad %ld max err %g\n", B, Hq, Hk, D, MP,
         bad, maxe);
  return bad != 0;
}
