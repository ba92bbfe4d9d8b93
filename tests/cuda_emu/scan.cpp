// scan.cpp — CPU-emulation check of a selective_scan CUDA kernel
// (tests/cuda_emu/run.sh): inputs drawn as tasks/selective_scan/task.json
// draws them, the output NaN-filled first, compared with a double port of
// the task's reference.c at the task's fp32 tolerance (atol 2e-5, rtol
// 1e-4). Geometry: WSCAN (warp_scan: WARPS warps of CPW channels per
// block, dynamic shared memory for B and C) or the baseline. Args: batch dim
// seqlen [delta_softplus, default 1].
#include KFILE
#include <random>
static void reference(const std::vector<float> &u, const std::vector<float> &dl,
                      const std::vector<float> &A, const std::vector<float> &B,
                      const std::vector<float> &C, const std::vector<float> &D,
                      const std::vector<float> &z, std::vector<double> &o,
                      long nb, long nd, long L, int sp) {
  for (long b = 0; b < nb; b++)
    for (long d = 0; d < nd; d++) {
      long row = (b * nd + d) * L;
      double h[16] = {0};
      for (long t = 0; t < L; t++) {
        double dt = dl[row + t];
        if (sp)
          dt = dt > 20.0 ? dt : log1p(exp(dt));
        double ut = u[row + t], y = 0;
        for (int n = 0; n < 16; n++) {
          h[n] = exp(dt * A[d * 16 + n]) * h[n] +
                 dt * B[(b * 16 + n) * L + t] * ut;
          y += h[n] * C[(b * 16 + n) * L + t];
        }
        y += D[d] * ut;
        double zt = z[row + t];
        o[row + t] = y * (zt / (1.0 + exp(-zt)));
      }
    }
}
int main(int argc, char **argv) {
  long nb = atol(argv[1]), nd = atol(argv[2]), L = atol(argv[3]);
  int sp = argc > 4 ? atoi(argv[4]) : 1;
  std::mt19937 rng(7);
  std::normal_distribution<float> nrm;
  std::uniform_real_distribution<float> ud(-2.5f, 0.5f), ua(-2.f, -0.1f);
  long n3 = nb * nd * L, nbc = nb * 16 * L;
  std::vector<float> u(n3), dl(n3), A(nd * 16), B(nbc), C(nbc), D(nd), z(n3),
      o(n3, NAN);
  emu_fill(u, nrm, rng);
  emu_fill(dl, ud, rng);
  emu_fill(A, ua, rng);
  emu_fill(B, nrm, rng);
  emu_fill(C, nrm, rng);
  emu_fill(D, nrm, rng);
  emu_fill(z, nrm, rng);
  // without softplus dt can be negative and h grow without bound: keep
  // delta positive there, as a caller passing dt directly would
  if (!sp)
    for (auto &x : dl)
      x = (x + 2.5f) / 3.f;
#ifdef WSCAN
  // the template's launch line: IT is its steps per lane (ITEMS, fewer
  // with CPW channels per warp)
  launch(
      dim3{(unsigned)((nd + WARPS * CPW - 1) / (WARPS * CPW)), (unsigned)nb, 1},
      dim3{32 * WARPS, 1, 1}, 2 * 16 * 32 * IT * 4, [&] {
        selective_scan(u.data(), dl.data(), A.data(), B.data(), C.data(),
                       D.data(), z.data(), o.data(), nb, nd, L, sp);
      });
#else
  launch(dim3{(unsigned)((nb * nd + 127) / 128), 1, 1}, dim3{128, 1, 1}, 0,
         [&] {
           selective_scan(u.data(), dl.data(), A.data(), B.data(), C.data(),
                          D.data(), z.data(), o.data(), nb, nd, L, sp);
         });
#endif
  std::vector<double> r(n3);
  reference(u, dl, A, B, C, D, z, r, nb, nd, L, sp);
  long bad = 0;
  double worst = 0;
  for (long i = 0; i < n3; i++) {
    double err = fabs(o[i] - r[i]), lim = 2e-5 + 1e-4 * fabs(r[i]);
    if (!(err <= lim)) {
      if (bad < 5)
        printf("out %ld ref %.7g got %.7g\n", i, r[i], o[i]);
      bad++;
    }
    if (err / lim > worst)
      worst = err / lim;
  }
  printf("b%ld d%ld L%ld softplus %d: bad %ld of %ld, worst err/tol %.3f\n", nb,
         nd, L, sp, bad, n3, worst);
  return bad != 0;
}
