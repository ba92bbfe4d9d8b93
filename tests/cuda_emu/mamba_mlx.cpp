// mamba_mlx.cpp — CPU-emulation check of a tasks/mamba_mlx MLX template
// (an mx.fast.cuda_kernel body; tests/cuda_emu/run.sh): run.sh turns the body
// into the source MLX would compile (mlx/ksmlx.py source, with the axes of
// the case as template constants) and then into C++ (xform.py); this file
// launches it with the template's launch line (grid in threads over
// threadgroups, dynamic shared memory) on inputs drawn as the task draws
// them and compares y with a double port of the task's reference.c at the
// task's fp32 tolerance (atol 1e-4, rtol 1e-4). KS_KERNEL names the kernel
// (custom_kernel_<name>), CS the chunked_scan geometry. Args: batch seqlen
// dim (the axes the source was made for).
#include "emu.h"
#include <algorithm>
using std::min; // CUDA's integer min, which MLX bodies call
#include KFILE
#include <random>
using namespace mlx::core::cu;
int main(int argc, char **argv) {
  (void)argc;
  long nb = atol(argv[1]), L = atol(argv[2]), nd = atol(argv[3]), N = 16;
  std::mt19937 rng(11);
  std::normal_distribution<float> nrm;
  std::uniform_real_distribution<float> ud(0.001f, 0.2f), ua(-8.f, -0.5f);
  long n3 = nb * L * nd, nbc = nb * L * N;
  std::vector<float> x(n3), dl(n3), A(nd * N), B(nbc), C(nbc), D(nd),
      y(n3, NAN);
  emu_fill(x, nrm, rng);
  emu_fill(dl, ud, rng);
  emu_fill(A, ua, rng);
  emu_fill(B, nrm, rng);
  emu_fill(C, nrm, rng);
  emu_fill(D, nrm, rng);
#ifdef CS
  // grid=(cdiv(dim, CH) * CH * NCH, batch) threadgroup=(CH * NCH, 1)
  // smem=(4 * NCH * CH * 17)
  launch(dim3{(unsigned)((nd + CH - 1) / CH), (unsigned)nb, 1},
         dim3{CH * NCH, 1, 1}, 4 * NCH * CH * 17, [&] {
           KS_KERNEL(x.data(), dl.data(), A.data(), B.data(), C.data(),
                     D.data(), y.data());
         });
#else
  // thread_per_channel: grid=(cdiv(dim, TG) * TG, batch) threadgroup=(TG, 1)
  launch(dim3{(unsigned)((nd + TG - 1) / TG), (unsigned)nb, 1},
         dim3{TG, 1, 1}, 0, [&] {
           KS_KERNEL(x.data(), dl.data(), A.data(), B.data(), C.data(),
                     D.data(), y.data());
         });
#endif
  long bad = 0;
  double worst = 0;
  for (long b = 0; b < nb; b++)
    for (long d = 0; d < nd; d++) {
      double h[16] = {0};
      for (long t = 0; t < L; t++) {
        long i = (b * L + t) * nd + d;
        double dt = dl[i], acc = 0;
        for (long n = 0; n < N; n++) {
          h[n] = exp(dt * A[d * N + n]) * h[n] +
                 dt * x[i] * B[(b * L + t) * N + n];
          acc += h[n] * C[(b * L + t) * N + n];
        }
        double r = acc + D[d] * x[i], err = fabs(y[i] - r),
               lim = 1e-4 + 1e-4 * fabs(r);
        if (!(err <= lim)) {
          if (bad < 5)
            printf("y b%ld t%ld d%ld ref %.7g got %.7g\n", b, t, d, r, y[i]);
          bad++;
        }
        if (err / lim > worst)
          worst = err / lim;
      }
    }
  printf("b%ld L%ld d%ld: bad %ld of %ld, worst err/tol %.3f\n", nb, L, nd, bad,
         n3, worst);
  return bad != 0;
}
