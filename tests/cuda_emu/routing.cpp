// routing.cpp — CPU-emulation check of a moe_routing CUDA kernel
// (tests/cuda_emu/run.sh): integer logits (ties everywhere), ids, weights,
// offsets and sorted against a stable-sort reference; RUNS launches in a row on
// one 0xFF-filled scratch (the grid barrier's counter carries over). Geometry:
// FUSED (all blocks at once), BSORT, TSEL or the baseline. Args: tokens experts
// topk [runs].
#include KFILE
#ifdef MLXK
using namespace mlx::core::cu;
#endif
#include <algorithm>
#include <random>
int main(int argc, char **argv) {
  long T = atol(argv[1]), E = atol(argv[2]), K = atol(argv[3]);
  int runs = argc > 4 ? atoi(argv[4]) : 1;
  std::vector<unsigned> scratch(1 << 20, 0xFFFFFFFFu);
  long bad = 0;
  for (int run = 0; run < runs; run++) {
    std::mt19937 rng(10 + run);
    std::vector<float> lg(T * E), w(T * K, NAN);
    std::vector<int> ids(T * K, -7), off(E + 1, -7), srt(T * K, -7);
    for (auto &x : lg) { // -0.0 among them: it ties +0.0
      x = (float)((int)(rng() % 25) - 12);
      if (x == 0.f && rng() % 2)
        x = -0.f;
    }
#ifdef MLXK
    // MLX fills its outputs, the scratch among them, with init_value -1 on
    // every call; all blocks at once (a persistent body's grid barrier)
    std::vector<int32_t> ks(MLX_SCRATCH > 0 ? MLX_SCRATCH : 1, -1);
    launch_concurrent(
        dim3{MLX_GX, MLX_GY, MLX_GZ}, dim3{MLX_TX, MLX_TY, MLX_TZ}, [&] {
          KS_KERNEL(lg.data(), w.data(), ids.data(), off.data(), srt.data()
#if MLX_SCRATCH > 0
                                                                     ,
                    ks.data()
#endif
          );
        });
#elif defined(FUSED)
    launch_concurrent(dim3{PERSISTENT, 1, 1}, dim3{32 * WARPS, 1, 1}, [&] {
      moe_routing(lg.data(), w.data(), ids.data(), off.data(), srt.data(), T, E,
                  K, scratch.data());
    });
#elif defined(BSORT)
    unsigned nb = (T + ROWS - 1) / ROWS;
    int *sc = (int *)scratch.data();
    launch(dim3{nb, 1, 1}, dim3{32 * WARPS, 1, 1}, 0, [&] {
      route_select(lg.data(), w.data(), ids.data(), off.data(), srt.data(), T,
                   E, K, sc);
    });
    launch(dim3{1, 1, 1}, dim3{256, 1, 1}, 0, [&] {
      route_scan(lg.data(), w.data(), ids.data(), off.data(), srt.data(), T, E,
                 K, sc);
    });
    launch(dim3{nb, 1, 1}, dim3{32 * WARPS, 1, 1}, 0, [&] {
      route_place(lg.data(), w.data(), ids.data(), off.data(), srt.data(), T, E,
                  K, sc);
    });
#elif defined(TSEL)
    launch(dim3{(unsigned)((T + THREADS - 1) / THREADS), 1, 1},
           dim3{THREADS, 1, 1}, 0, [&] {
             route_thread_select(lg.data(), w.data(), ids.data(), off.data(),
                                 srt.data(), T, E, K);
           });
    launch(dim3{1, 1, 1}, dim3{1024, 1, 1}, 0, [&] {
      route_block_sort(lg.data(), w.data(), ids.data(), off.data(), srt.data(),
                       T, E, K);
    });
#else
    launch(dim3{(unsigned)((T + 127) / 128), 1, 1}, dim3{128, 1, 1}, 0, [&] {
      route_select(lg.data(), w.data(), ids.data(), off.data(), srt.data(), T,
                   E, K);
    });
    launch(dim3{1, 1, 1}, dim3{256, 1, 1}, 0, [&] {
      route_group(lg.data(), w.data(), ids.data(), off.data(), srt.data(), T, E,
                  K);
    });
#endif
    // reference
    std::vector<int> cnt(E, 0);
    for (long t = 0; t < T; t++) {
      std::vector<int> idx(E);
      for (int e = 0; e < E; e++)
        idx[e] = e;
      std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
        return lg[t * E + a] > lg[t * E + b];
      });
      double mx = lg[t * E + idx[0]], s = 0;
      for (int j = 0; j < K; j++)
        s += exp(lg[t * E + idx[j]] - mx);
      for (int j = 0; j < K; j++) {
        double rw = exp(lg[t * E + idx[j]] - mx) / s;
        if (ids[t * K + j] != idx[j]) {
          if (bad < 5)
            printf("ids t%ld j%d ref %d got %d\n", t, j, idx[j],
                   ids[t * K + j]);
          bad++;
        }
        if (!(fabs(w[t * K + j] - rw) <= 1e-6 + 1e-5 * rw)) {
          if (bad < 5)
            printf("w t%ld j%d ref %g got %g\n", t, j, rw, w[t * K + j]);
          bad++;
        }
        cnt[idx[j]]++;
      }
    }
    std::vector<int> ro(E + 1, 0);
    for (int e = 0; e < E; e++)
      ro[e + 1] = ro[e] + cnt[e];
    for (int e = 0; e <= E; e++)
      if (off[e] != ro[e]) {
        if (bad < 5)
          printf("off %d ref %d got %d\n", e, ro[e], off[e]);
        bad++;
      }
    std::vector<int> pos(ro.begin(), ro.end() - 1), rs(T * K);
    for (long a = 0; a < T * K; a++) {
      long t = a / K;
      int j = a % K;
      std::vector<int> idx(E);
      for (int e = 0; e < E; e++)
        idx[e] = e;
      std::stable_sort(idx.begin(), idx.end(), [&](int x, int y) {
        return lg[t * E + x] > lg[t * E + y];
      });
      rs[pos[idx[j]]++] = a;
    }
    for (long a = 0; a < T * K; a++)
      if (srt[a] != rs[a]) {
        if (bad < 5)
          printf("sorted %ld ref %d got %d\n", a, rs[a], srt[a]);
        bad++;
      }
  }
  printf("T%ld E%ld K%ld runs %d: bad %ld\n", T, E, K, runs, bad);
  return bad != 0;
}
