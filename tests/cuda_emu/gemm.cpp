// gemm.cpp — CPU-emulation check of a gemm_bf16 CUDA kernel
// (tests/cuda_emu/run.sh): random bf16 a, b; the kernel run on emu.h with its
// launch geometry (MMA_PIPE, WGMMA, WMMA, BASE or the SIMT default; WGMMA
// with the header's two tensor maps, encoded as the executor does); c against
// a double-precision product rounded to bf16, the task's tolerance. Args: m n
// k. EMU_CP_EAGER=1 among the params: cp.async lands at issue (emu.h). Exit 1
// on any mismatch.
#include KFILE
#ifdef MLXK
using namespace mlx::core::cu;
#endif
#include <random>
int main(int argc, char **argv) {
#ifdef EMU_CP_EAGER
  g_cp_eager = true;
#endif
  long m = atol(argv[1]), n = atol(argv[2]), k = atol(argv[3]);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  std::vector<__nv_bfloat16> a(m * k), b(k * n),
      c(m * n, __nv_bfloat16{0x7fc0});
  emu_fill(a, nd, rng);
  emu_fill(b, nd, rng);
  dim3 g, bl;
  size_t smem = 0;
#ifdef MLXK
  g = {MLX_GX, MLX_GY, MLX_GZ};
  bl = {MLX_TX, MLX_TY, MLX_TZ};
  smem = MLX_SMEM;
#elif defined(MMA_PIPE)
  g.x = ((m + TILE_M - 1) / TILE_M) * ((n + TILE_N - 1) / TILE_N);
  bl.x = 32 * WARPS;
  smem = STAGES * (TILE_M * (TK + 8) + TK * (TILE_N + 8)) * 2;
#elif defined(WGMMA)
  g.x = ((m + TILE_M - 1) / TILE_M) * ((n + TILE_N - 1) / TILE_N);
  if (PERSIST && g.x > SMS)
    g.x = SMS;
  bl.x = 128 * (WGS + (WS || TMA));
  smem = STAGES * (TILE_M * 128 + 128 * TILE_N + 16) + 1024;
#elif defined(WMMA)
  g.x = (n + TILE_N - 1) / TILE_N;
  g.y = (m + TILE_M - 1) / TILE_M;
  bl.x = 32 * WARPS;
  smem = std::max(2 * (TILE_M * 40 + 32 * (TILE_N + 8)),
                  4 * TILE_M * (TILE_N + 4));
#elif defined(BASE)
  g.x = (n + 15) / 16;
  g.y = (m + 15) / 16;
  bl.x = 256;
#else
  g.x = (n + TILE_N - 1) / TILE_N;
  g.y = (m + TILE_M - 1) / TILE_M;
  bl.x = (TILE_M / 8) * (TILE_N / 8);
#endif
#ifdef WGMMA
  // the header's tensor maps as the executor encodes them: a as (k, m) box
  // (64, TILE_M), b as (n, k) box (64, 64), 128B swizzle; rows that are no
  // multiple of 16 bytes get a zero map
  tmap_t ta, tb;
  memset(&ta, 0, sizeof ta);
  memset(&tb, 0, sizeof tb);
  {
    uint64_t da[2] = {(uint64_t)k, (uint64_t)m}, sa[1] = {(uint64_t)k * 2};
    uint64_t db[2] = {(uint64_t)n, (uint64_t)k}, sb[1] = {(uint64_t)n * 2};
    uint32_t ba[2] = {64, TILE_M}, bb[2] = {64, 64};
    if (sa[0] % 16 == 0 &&
        !emu_tmap_encode(&ta, 2, 2, a.data(), da, sa, ba, 128))
      return printf("tensor map a refused\n"), 1;
    if (sb[0] % 16 == 0 &&
        !emu_tmap_encode(&tb, 2, 2, b.data(), db, sb, bb, 128))
      return printf("tensor map b refused\n"), 1;
  }
  launch(g, bl, smem,
         [&] { gemm_bf16(a.data(), b.data(), c.data(), m, n, k, ta, tb); });
#elif defined(MLXK)
  launch(g, bl, smem, [&] { KS_KERNEL(a.data(), b.data(), c.data()); });
#else
  launch(g, bl, smem,
         [&] { gemm_bf16(a.data(), b.data(), c.data(), m, n, k); });
#endif
  double maxe = 0;
  long bad = 0;
  for (long i = 0; i < m; i++)
    for (long j = 0; j < n; j++) {
      double s = 0;
      for (long p = 0; p < k; p++)
        s += (double)__bfloat162float(a[i * k + p]) *
             __bfloat162float(b[p * n + j]);
      float ref = __bfloat162float(__float2bfloat16_rn((float)s)),
            got = __bfloat162float(c[i * n + j]);
      double e = fabs(ref - got);
      if (!(e <= 0.02 + 0.01 * fabs(ref))) {
        if (bad < 5)
          printf("bad %ld %ld ref %f got %f\n", i, j, ref, got);
        bad++;
      }
      if (e > maxe)
        maxe = e;
    }
  printf("m%ld n%ld k%ld: bad %ld max err %g\n", m, n, k, bad, maxe);
  return bad != 0;
}
