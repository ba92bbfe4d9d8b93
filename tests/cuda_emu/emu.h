// emu.h — CPU emulation of the CUDA subset the issue-16 templates use, so CI
// (no GPU) checks their index math, fragment layouts and pipelines
// (tests/cuda_emu/run.sh; DESIGN.md: Tests and CI). One std::thread per CUDA
// thread, blocks one after another (launch) or all at once (launch_concurrent,
// for grid barriers); __syncthreads is a block barrier that exited threads
// leave; warp collectives (shuffles, match_any, ldmatrix, mma.sync m16n8k16)
// exchange through a per-warp slot array between two warp barriers, with the
// register layouts of the PTX ISA (wgmma's A from registers likewise through
// a per-warpgroup one); cp.async copies land only when wait_group
// retires their group, so a missing wait reads stale shared memory. Timing,
// memory-model and occupancy questions are out of its reach: the GPU run
// (bench/gpu/kernels16.sh) answers those.
#pragma once
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
struct Warp {
  std::barrier<> *bar;
  uint64_t slot[32][8];
};
// a warpgroup's exchange (wgmma with A from registers): 4 registers a thread
struct WarpGroup {
  std::barrier<> *bar;
  uint32_t slot[128][4];
};
inline std::barrier<> *g_bb;
inline Warp *g_warps;
inline WarpGroup *g_wgs;
inline unsigned char *g_dyn;
inline size_t g_dyn_size;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __trap() (fprintf(stderr, "trap %s:%d\n", __FILE__, __LINE__), abort())
#define INFINITY_ INFINITY
inline thread_local std::barrier<> *t_bb0 = nullptr;
inline std::barrier<> *cur_bb();
inline void __syncthreads() { cur_bb()->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0) {}
inline void __threadfence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __nanosleep(unsigned) { std::this_thread::yield(); }
inline int lane_id() { return threadIdx.x & 31; }
inline Warp *cur_warps();
inline Warp &my_warp() { return cur_warps()[threadIdx.x >> 5]; }
template <class T> inline uint64_t tobits(T v) {
  uint64_t b = 0;
  memcpy(&b, &v, sizeof v);
  return b;
}
template <class T> inline T frombits(uint64_t b) {
  T v;
  memcpy(&v, &b, sizeof v);
  return v;
}
template <class T> T xchg(T v, int src) {
  Warp &w = my_warp();
  int l = lane_id();
  w.slot[l][0] = tobits(v);
  w.bar->arrive_and_wait();
  T r = frombits<T>(w.slot[src][0]);
  w.bar->arrive_and_wait();
  return r;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int o) {
  return xchg(v, lane_id() ^ o);
}
template <class T> T __shfl_sync(unsigned, T v, int s) {
  return xchg(v, s & 31);
}
template <class T> T __shfl_up_sync(unsigned, T v, int d) {
  int l = lane_id();
  return xchg(v, l >= d ? l - d : l);
}
inline unsigned __match_any_sync(unsigned, int v) {
  Warp &w = my_warp();
  int l = lane_id();
  w.slot[l][0] = (uint64_t)(uint32_t)v;
  w.bar->arrive_and_wait();
  unsigned m = 0;
  for (int i = 0; i < 32; i++)
    if ((uint32_t)w.slot[i][0] == (uint32_t)v)
      m |= 1u << i;
  w.bar->arrive_and_wait();
  return m;
}
// vote.sync: every lane's predicate as a mask (the whole warp takes part)
inline unsigned __ballot_sync(unsigned, int p) {
  Warp &w = my_warp();
  int l = lane_id();
  w.slot[l][0] = p != 0;
  w.bar->arrive_and_wait();
  unsigned m = 0;
  for (int i = 0; i < 32; i++)
    if (w.slot[i][0])
      m |= 1u << i;
  w.bar->arrive_and_wait();
  return m;
}
inline int __any_sync(unsigned mask, int p) {
  return __ballot_sync(mask, p) != 0;
}
inline int __all_sync(unsigned mask, int p) {
  return __ballot_sync(mask, p) == 0xffffffffu;
}
// redux.sync (sm_80+): the warp's max / min of a 32-bit unsigned
inline unsigned warp_redux(unsigned v, bool mx) {
  Warp &w = my_warp();
  int l = lane_id();
  w.slot[l][0] = v;
  w.bar->arrive_and_wait();
  unsigned r = (unsigned)w.slot[0][0];
  for (int i = 1; i < 32; i++) {
    unsigned x = (unsigned)w.slot[i][0];
    r = mx ? (x > r ? x : r) : (x < r ? x : r);
  }
  w.bar->arrive_and_wait();
  return r;
}
inline unsigned __reduce_max_sync(unsigned, unsigned v) {
  return warp_redux(v, true);
}
inline unsigned __reduce_min_sync(unsigned, unsigned v) {
  return warp_redux(v, false);
}
inline unsigned __float_as_uint(float f) {
  return frombits<unsigned>(tobits(f));
}
inline float __uint_as_float(unsigned u) { return frombits<float>(tobits(u)); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
template <class T> T __ldg(const T *p) { return *p; }
template <class T> T __ldcg(const T *p) {
  T v;
  __atomic_load(p, &v, __ATOMIC_SEQ_CST); // any width: floats too
  return v;
}
// a 16-byte ld.global.cg: each 4-byte word loaded atomically (the device
// gives no more; a whole-vector atomic would need libatomic)
struct float4;
template <> float4 __ldcg<float4>(const float4 *p);
inline int atomicAdd(int *p, int v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
inline unsigned atomicAdd(unsigned *p, unsigned v) {
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
inline unsigned atomicExch(unsigned *p, unsigned v) {
  return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
inline float __expf(float x) { return expf(x); }
// ex2.approx.ftz.f32: 2^x with subnormal results flushed to zero
inline float ex2(float x) {
  float y = exp2f(x);
  return y < 1.17549435e-38f ? 0.f : y;
}
struct float2 {
  float x, y;
};
struct float4 {
  float x, y, z, w;
};
template <> inline float4 __ldcg<float4>(const float4 *p) {
  const float *f = (const float *)p;
  return float4{__ldcg(f), __ldcg(f + 1), __ldcg(f + 2), __ldcg(f + 3)};
}
struct uint2 {
  uint32_t x, y;
};
struct uint4 {
  uint32_t x, y, z, w;
};
inline uint2 make_uint2(uint32_t a, uint32_t b) { return {a, b}; }
inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return {a, b, c, d};
}
inline float4 make_float4(float a, float b, float c, float d) {
  return {a, b, c, d};
}
struct __nv_bfloat16 {
  uint16_t x;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
inline float __bfloat162float(__nv_bfloat16 h) {
  uint32_t u = (uint32_t)h.x << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return {0x7fc0};
  u += 0x7fffu + ((u >> 16) & 1u);
  return {(uint16_t)(u >> 16)};
}
inline __nv_bfloat16 __float2bfloat16(float f) {
  return __float2bfloat16_rn(f);
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return {__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}
inline float2 __bfloat1622float2(__nv_bfloat162 h) {
  return {__bfloat162float(h.x), __bfloat162float(h.y)};
}
// The harnesses' inputs: every element of v a draw of dist (rounded to
// bf16 where v holds bf16), in order, so a seed gives the same data.
inline void emu_set(float &x, float f) { x = f; }
inline void emu_set(__nv_bfloat16 &x, float f) { x = __float2bfloat16_rn(f); }
template <class T, class Dist, class Rng>
void emu_fill(std::vector<T> &v, Dist &dist, Rng &rng) {
  for (auto &x : v)
    emu_set(x, dist(rng));
}
// --- the PTX helpers ---
// cp.async: a copy lands in shared memory only when a wait_group retires
// its group, so a kernel that reads a stage before waiting for it reads the
// stale bytes (and fails the comparison)
struct CpOp {
  void *dst;
  unsigned char data[16];
};
// EMU_CP_EAGER (a kernel macro, set by the harness): copies land at once
// instead, which exposes the other race, a slot refilled while an issued
// wgmma may still read it (emulated wgmma reads at issue and at retirement)
inline bool g_cp_eager = false;
inline thread_local std::vector<CpOp> t_cp_open;
inline thread_local std::vector<std::vector<CpOp>> t_cp_groups;
inline void cp16(void *d, const void *s, int n) {
  if (g_cp_eager) {
    if (n)
      memcpy(d, s, 16);
    else
      memset(d, 0, 16);
    return;
  }
  CpOp op;
  op.dst = d;
  if (n)
    memcpy(op.data, s, 16);
  else
    memset(op.data, 0, 16);
  t_cp_open.push_back(op);
}
inline void cp_commit() {
  t_cp_groups.push_back(t_cp_open);
  t_cp_open.clear();
}
template <int N> inline void cp_wait() {
  while (t_cp_groups.size() > (size_t)N) {
    for (auto &op : t_cp_groups.front())
      memcpy(op.dst, op.data, 16);
    t_cp_groups.erase(t_cp_groups.begin());
  }
}
inline uint32_t pk(uint16_t lo, uint16_t hi) { return lo | (uint32_t)hi << 16; }
inline void ldm_common(uint32_t *r, const void *p, bool tr) {
  Warp &w = my_warp();
  int l = lane_id();
  w.slot[l][0] = (uint64_t)p;
  w.bar->arrive_and_wait();
  for (int i = 0; i < 4; i++) {
    if (!tr) {
      const uint16_t *row = (const uint16_t *)w.slot[i * 8 + l / 4][0];
      r[i] = pk(row[2 * (l % 4)], row[2 * (l % 4) + 1]);
    } else {
      const uint16_t *r0 = (const uint16_t *)w.slot[i * 8 + 2 * (l % 4)][0],
                     *r1 = (const uint16_t *)w.slot[i * 8 + 2 * (l % 4) + 1][0];
      r[i] = pk(r0[l / 4], r1[l / 4]);
    }
  }
  w.bar->arrive_and_wait();
}
inline void ldm_x4(uint32_t *r, const void *p) { ldm_common(r, p, false); }
inline void ldm_x4_t(uint32_t *r, const void *p) { ldm_common(r, p, true); }
inline float bfl(uint32_t v, int hi) {
  __nv_bfloat16 h{(uint16_t)(hi ? v >> 16 : v & 0xffff)};
  return __bfloat162float(h);
}
inline void mma16816(float *d, const uint32_t *a, const uint32_t *b) {
  Warp &w = my_warp();
  int l = lane_id();
  for (int i = 0; i < 4; i++)
    w.slot[l][i] = a[i];
  w.slot[l][4] = b[0];
  w.slot[l][5] = b[1];
  w.bar->arrive_and_wait();
  float A[16][16], B[16][8];
  for (int t = 0; t < 32; t++) {
    int g = t / 4, q = t % 4;
    uint32_t a0 = w.slot[t][0], a1 = w.slot[t][1], a2 = w.slot[t][2],
             a3 = w.slot[t][3];
    A[g][2 * q] = bfl(a0, 0);
    A[g][2 * q + 1] = bfl(a0, 1);
    A[g + 8][2 * q] = bfl(a1, 0);
    A[g + 8][2 * q + 1] = bfl(a1, 1);
    A[g][2 * q + 8] = bfl(a2, 0);
    A[g][2 * q + 9] = bfl(a2, 1);
    A[g + 8][2 * q + 8] = bfl(a3, 0);
    A[g + 8][2 * q + 9] = bfl(a3, 1);
    uint32_t b0 = w.slot[t][4], b1 = w.slot[t][5];
    B[2 * q][g] = bfl(b0, 0);
    B[2 * q + 1][g] = bfl(b0, 1);
    B[2 * q + 8][g] = bfl(b1, 0);
    B[2 * q + 9][g] = bfl(b1, 1);
  }
  w.bar->arrive_and_wait();
  int g = l / 4, q = l % 4;
  for (int e = 0; e < 4; e++) {
    int row = g + (e >= 2 ? 8 : 0), col = 2 * q + (e & 1);
    float s = d[e];
    for (int k = 0; k < 16; k++)
      s += A[row][k] * B[k][col];
    d[e] = s;
  }
}
// --- Hopper warpgroup MMA (wgmma, sm_90a) ---
// Shared addresses (smem_u32) count from EMU_SMEM_BASE, 128- but not
// 1024-aligned as a real window need not be, so a kernel that does not align
// its 128B-swizzle atoms itself reads the wrong elements. wgmma_bf16<N> is
// m64nNk16 bf16 -> f32 with A K-major and B MN-major (imm-trans-b 1), both
// from shared memory through matrix descriptors decoded as the PTX ISA's
// canonical layouts: bits [0,14) start >> 4, [16,30) LBO >> 4, [32,46)
// SBO >> 4, [49,52) base offset (must be 0 here), [62,64) swizzle (0 none,
// 1 128B; others abort). 128B swizzle XORs address bits [4,7) with [7,10).
//   K-major  none: ((8,m),(8,2)):((8,SBO),(1,LBO))   SW128:
//   ((8,m),16):((64,SBO),1) MN-major none: ((8,m),(8,k)):((1,SBO),(8,LBO))
//   SW128: ((64,m),(8,k)):((1,LBO),(64,SBO))
// (element strides; LBO/SBO in bytes.) The product is taken when the
// instruction issues and again when wait_group retires it: a difference
// means shared memory changed under an in-flight wgmma (a refilled slot) and
// aborts; the accumulators change only at retirement, as on the device.
constexpr uint32_t EMU_SMEM_BASE = 0x480;
inline uint32_t smem_u32(const void *p) {
  return (uint32_t)((const unsigned char *)p - g_dyn) + EMU_SMEM_BASE;
}
inline float wg_ld(uint32_t addr, int swz) {
  if (swz == 1)
    addr ^= ((addr >> 7) & 7) << 4;
  if (addr < EMU_SMEM_BASE || addr + 2 > EMU_SMEM_BASE + g_dyn_size) {
    fprintf(stderr, "wgmma operand at shared 0x%x outside the %zu bytes\n",
            addr, g_dyn_size);
    abort();
  }
  uint16_t h;
  memcpy(&h, g_dyn + (addr - EMU_SMEM_BASE), 2);
  return __bfloat162float(__nv_bfloat16{h});
}
struct WgDesc {
  uint32_t start, lbo, sbo;
  int swz;
};
inline WgDesc wg_desc(uint64_t d) {
  WgDesc r{(uint32_t)(d & 0x3FFF) << 4, (uint32_t)((d >> 16) & 0x3FFF) << 4,
           (uint32_t)((d >> 32) & 0x3FFF) << 4, (int)(d >> 62)};
  if (((d >> 49) & 7) || (r.swz != 0 && r.swz != 1) ||
      (r.swz == 1 && (r.start & 0x380))) {
    fprintf(stderr,
            "wgmma descriptor %#llx: base offset, swizzle mode or an "
            "atom-unaligned 128B start this emulation does not model\n",
            (unsigned long long)d);
    abort();
  }
  return r;
}
inline float wg_a(const WgDesc &d, int row, int k) { // K-major
  uint32_t a = d.swz ? d.start + (row % 8) * 128 + (row / 8) * d.sbo + k * 2
                     : d.start + (row % 8) * 16 + (row / 8) * d.sbo +
                           (k % 8) * 2 + (k / 8) * d.lbo;
  return wg_ld(a, d.swz);
}
inline float wg_b(const WgDesc &d, int k, int col) { // MN-major
  uint32_t a = d.swz ? d.start + (col % 64) * 2 + (col / 64) * d.lbo +
                           (k % 8) * 128 + (k / 8) * d.sbo
                     : d.start + (col % 8) * 2 + (col / 8) * d.sbo +
                           (k % 8) * 16 + (k / 8) * d.lbo;
  return wg_ld(a, d.swz);
}
// tb: B MN-major (imm-trans-b 1) or K-major (0: element (k, n) where a
// K-major A has (row n, k)); areg: A (64 x 16, row-major) gathered from the
// warpgroup's registers at issue, or null (A from shared, K-major); scale_d
// 0: the accumulators are overwritten, not added to (scale-d false)
struct WgOp {
  uint64_t da, db;
  float *d;
  int n, tb, scale_d;
  std::shared_ptr<std::vector<float>> areg;
  std::vector<float> at_issue;
};
// this thread's part of the 64 x n product: row 16*w + l/4 + 8*(e/2), column
// 8*q + 2*(l%4) + e%2 for register 4*q + e (PTX ISA wgmma D fragment)
inline std::vector<float> wg_product(const WgOp &op) {
  WgDesc B = wg_desc(op.db), A{};
  if (!op.areg)
    A = wg_desc(op.da);
  int t = threadIdx.x & 127, w = t / 32, l = t % 32;
  std::vector<float> r(op.n / 2);
  for (int j = 0; j < op.n / 2; j++) {
    int q = j / 4, e = j % 4;
    int row = 16 * w + l / 4 + 8 * (e / 2), col = 8 * q + 2 * (l % 4) + e % 2;
    float s = 0;
    for (int k = 0; k < 16; k++)
      s += (op.areg ? (*op.areg)[row * 16 + k] : wg_a(A, row, k)) *
           (op.tb ? wg_b(B, k, col) : wg_a(B, col, k));
    r[j] = s;
  }
  return r;
}
inline thread_local std::vector<WgOp> t_wg_open;
inline thread_local std::vector<std::vector<WgOp>> t_wg_groups;
template <int N> inline void wgmma_bf16(float *d, uint64_t da, uint64_t db) {
  WgOp op{da, db, d, N, 1, 1, nullptr, {}};
  op.at_issue = wg_product(op);
  t_wg_open.push_back(op);
}
// A K-major and B K-major (imm-trans-a 0, imm-trans-b 0) from shared memory
template <int N>
inline void wgmma_ss(float *d, uint64_t da, uint64_t db, int scale_d) {
  WgOp op{da, db, d, N, 0, scale_d != 0, nullptr, {}};
  op.at_issue = wg_product(op);
  t_wg_open.push_back(op);
}
inline WarpGroup *cur_wgs();
// A from registers (the PTX ISA's wgmma A fragment for 16-bit types, per
// warp w of the warpgroup the mma.m16n8k16 A layout on rows 16w..16w+15:
// a[0] (row l/4, k 2(l%4)+{0,1}), a[1] row + 8, a[2] k + 8, a[3] both), B
// MN-major (imm-trans-b 1) from shared memory. The registers are read at
// issue (every thread of the warpgroup issues it: .sync.aligned)
template <int N>
inline void wgmma_rs(float *d, const uint32_t *a, uint64_t db, int scale_d) {
  WarpGroup &g = cur_wgs()[threadIdx.x >> 7];
  int t = threadIdx.x & 127;
  for (int i = 0; i < 4; i++)
    g.slot[t][i] = a[i];
  g.bar->arrive_and_wait();
  auto A = std::make_shared<std::vector<float>>(64 * 16);
  for (int u = 0; u < 128; u++) {
    int row = 16 * (u / 32) + (u % 32) / 4, k = 2 * (u % 4);
    for (int i = 0; i < 4; i++)
      for (int h = 0; h < 2; h++)
        (*A)[(row + 8 * (i & 1)) * 16 + k + 8 * (i >> 1) + h] =
            bfl(g.slot[u][i], h);
  }
  g.bar->arrive_and_wait();
  WgOp op{0, db, d, N, 1, scale_d != 0, A, {}};
  op.at_issue = wg_product(op);
  t_wg_open.push_back(op);
}
inline void wg_fence() {}
inline void fence_async() {}
template <int N> inline void acc_fence(float *) {}
template <int N> inline void reg_fence(uint32_t *) {}
// named barriers with a count (bar.sync / bar.arrive ID, N): a block's
// barrier ID is made with its count at the first use; pp_sync/pp_arrive are
// IDs 4 + w with 256 threads (wgmma_flash's pingpong between warpgroups)
inline std::mutex g_nb_mu;
inline std::barrier<> *g_nb[16];
inline std::barrier<> *named_bar(int id, int count) {
  std::lock_guard<std::mutex> g(g_nb_mu);
  if (!g_nb[id])
    g_nb[id] = new std::barrier<>(count);
  return g_nb[id];
}
inline void pp_sync(int w) { named_bar(4 + w, 256)->arrive_and_wait(); }
inline void pp_arrive(int w) {
  auto token = named_bar(4 + w, 256)->arrive();
  (void)token;
}
// bar.sync 1 + wg, 128: the warpgroup's own barrier
inline void wg_bar(int) { cur_wgs()[threadIdx.x >> 7].bar->arrive_and_wait(); }
// setmaxnreg: register allocation is the compiler's and the device's concern
template <int N> inline void reg_alloc() {}
template <int N> inline void reg_dealloc() {}
inline void wg_commit() {
  t_wg_groups.push_back(t_wg_open);
  t_wg_open.clear();
}
template <int N> inline void wg_wait() {
  while (t_wg_groups.size() > (size_t)N) {
    for (auto &op : t_wg_groups.front()) {
      std::vector<float> now = wg_product(op);
      if (memcmp(now.data(), op.at_issue.data(), now.size() * sizeof(float))) {
        fprintf(stderr,
                "thread %u: shared memory under an in-flight wgmma "
                "changed before its wait_group\n",
                threadIdx.x);
        abort();
      }
      for (int j = 0; j < op.n / 2; j++)
        op.d[j] = (op.scale_d ? op.d[j] : 0.f) + now[j];
    }
    t_wg_groups.erase(t_wg_groups.begin());
  }
}
// --- mbarriers (sm_90 producer/consumer pipelines) ---
// One state per shared address (a block's mbar_init resets it): arrivals
// still pending in the current phase, the count, the phase's parity.
// try_wait.parity(P) is true once the phase of parity P completed, so a
// fresh barrier reports parity 1 done. cp_mbar_arrive
// (cp.async.mbarrier.arrive.noinc) lands this thread's copies, then arrives.
#include <mutex>
#include <unordered_map>
struct MbarState {
  int pending, count, phase;
};
inline std::mutex g_mbar_mu;
inline std::unordered_map<uint32_t, MbarState> g_mbar;
inline void mbar_init(uint32_t bar, int count) {
  std::lock_guard<std::mutex> g(g_mbar_mu);
  g_mbar[bar] = {count, count, 0};
}
inline void mbar_arrive(uint32_t bar) {
  std::lock_guard<std::mutex> g(g_mbar_mu);
  auto it = g_mbar.find(bar);
  if (it == g_mbar.end()) {
    fprintf(stderr, "arrive on an uninitialized mbarrier at 0x%x\n", bar);
    abort();
  }
  if (--it->second.pending == 0) {
    it->second.pending = it->second.count;
    it->second.phase ^= 1;
  }
}
inline void cp_mbar_arrive(uint32_t bar) {
  for (auto &grp : t_cp_groups)
    for (auto &op : grp)
      memcpy(op.dst, op.data, 16);
  t_cp_groups.clear();
  for (auto &op : t_cp_open)
    memcpy(op.dst, op.data, 16);
  t_cp_open.clear();
  mbar_arrive(bar);
}
inline bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  bool done;
  {
    std::lock_guard<std::mutex> g(g_mbar_mu);
    auto it = g_mbar.find(bar);
    if (it == g_mbar.end()) {
      fprintf(stderr, "wait on an uninitialized mbarrier at 0x%x\n", bar);
      abort();
    }
    done = (uint32_t)it->second.phase != (parity & 1);
  }
  if (!done)
    std::this_thread::yield();
  return done;
}
// --- launching ---
template <class F> void launch(dim3 grid, dim3 block, size_t smem, F f) {
  gridDim = grid;
  blockDim = block;
  unsigned nt = block.x * block.y * block.z;
  // 64 KiB of guard after the dynamic shared memory: a kernel that uses more
  // than its launch gives it is reported, not left to corrupt the heap
  const size_t guard = 65536;
  std::vector<unsigned char> dyn(smem + guard + 128);
  g_dyn = (unsigned char *)(((uintptr_t)dyn.data() + 127) & ~(uintptr_t)127);
  g_dyn_size = smem;
  memset(g_dyn + smem, 0x5C, guard);
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        memset(g_dyn, 0xAB, smem);
        std::barrier<> bb(nt);
        g_bb = &bb;
        unsigned nw = (nt + 31) / 32;
        std::vector<Warp> ws(nw);
        std::vector<std::barrier<> *> wb;
        for (unsigned i = 0; i < nw; i++) {
          ws[i].bar = new std::barrier<>(std::min(32u, nt - 32 * i));
        }
        g_warps = ws.data();
        unsigned ng = (nt + 127) / 128;
        std::vector<WarpGroup> gs(ng);
        for (unsigned i = 0; i < ng; i++)
          gs[i].bar = new std::barrier<>(std::min(128u, nt - 128 * i));
        g_wgs = gs.data();
        std::vector<std::thread> th;
        for (unsigned t = 0; t < nt; t++)
          th.emplace_back([=, &f, &bb, &ws, &gs] {
            threadIdx = {t, 0, 0};
            blockIdx = {bx, by, bz};
            f();
            bb.arrive_and_drop();
            ws[t >> 5].bar->arrive_and_drop();
            gs[t >> 7].bar->arrive_and_drop();
          });
        for (auto &x : th)
          x.join();
        for (auto &w : ws)
          delete w.bar;
        for (auto &g : gs)
          delete g.bar;
        for (auto &b : g_nb) {
          delete b;
          b = nullptr;
        }
        for (size_t i = 0; i < guard; i++)
          if (g_dyn[smem + i] != 0x5C) {
            fprintf(stderr,
                    "block (%u,%u,%u) wrote past its %zu bytes of dynamic "
                    "shared memory (first at byte %zu after the end)\n",
                    bx, by, bz, smem, i);
            abort();
          }
      }
}
// nvcuda::wmma, emulated whole-matrix per lane (every lane holds the tile)
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
template <class Use, int M, int N, int K, class T, class L = void>
struct fragment {
  float v[16][16];
};
template <class F> void fill_fragment(F &f, float x) {
  for (auto &r : f.v)
    for (auto &e : r)
      e = x;
}
template <class U, int M, int N, int K, class L>
void load_matrix_sync(fragment<U, M, N, K, __nv_bfloat16, L> &f,
                      const __nv_bfloat16 *p, unsigned ld) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++)
      f.v[i][j] = __bfloat162float(p[i * ld + j]);
}
template <class A, class B, class C>
void mma_sync(C &d, const A &a, const B &b, const C &c) {
  C r;
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      float s = c.v[i][j];
      for (int k = 0; k < 16; k++)
        s += a.v[i][k] * b.v[k][j];
      r.v[i][j] = s;
    }
  d = r;
}
template <class F>
void store_matrix_sync(float *p, const F &f, unsigned ld, layout_t) {
  if (lane_id() == 0)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++)
        p[i * ld + j] = f.v[i][j];
}
} // namespace wmma
} // namespace nvcuda
// all blocks at once (grid barriers): per-block barriers, warps and shared
inline thread_local std::barrier<> *t_bb;
inline thread_local Warp *t_warps;
// per-block shared arrays of a grid-barrier kernel: up to 8 of 32 * 256 + 8
// ints
inline thread_local int *t_blk_shared;
inline int *blk_shared(int i) { return t_blk_shared + i * (32 * 256 + 8); }
template <class F> void launch_concurrent(dim3 grid, dim3 block, F f) {
  gridDim = grid;
  blockDim = block;
  unsigned nt = block.x, nb = grid.x, nw = (nt + 31) / 32;
  std::vector<std::barrier<> *> bbs;
  std::vector<std::vector<Warp>> ws(nb);
  std::vector<std::vector<int>> sh(nb, std::vector<int>(8 * (32 * 256 + 8)));
  for (unsigned b = 0; b < nb; b++) {
    bbs.push_back(new std::barrier<>(nt));
    ws[b].resize(nw);
    for (auto &w : ws[b])
      w.bar = new std::barrier<>(32);
  }
  std::vector<std::thread> th;
  for (unsigned b = 0; b < nb; b++)
    for (unsigned t = 0; t < nt; t++)
      th.emplace_back([=, &f, &bbs, &ws, &sh] {
        threadIdx = {t, 0, 0};
        blockIdx = {b, 0, 0};
        t_bb = bbs[b];
        t_warps = ws[b].data();
        t_blk_shared = sh[b].data();
        f();
        t_bb->arrive_and_drop();
        t_warps[t >> 5].bar->arrive_and_drop();
      });
  for (auto &x : th)
    x.join();
}
inline std::barrier<> *cur_bb() { return t_bb ? t_bb : g_bb; }
inline Warp *cur_warps() { return t_warps ? t_warps : g_warps; }
// (launch_concurrent kernels use no warpgroup collectives)
inline WarpGroup *cur_wgs() { return g_wgs; }
// --- TMA: tensor maps and cp.async.bulk.tensor (sm_90) ---
// A kernel takes its maps as `const __grid_constant__ T NAME` (T any
// 128-byte, 64-aligned struct: CUtensorMap's size); emu_tmap_encode is
// cuTensorMapEncodeTiled as ksearch's executor calls it (interleave none,
// element strides 1, out-of-bounds elements zero), refusing what the driver
// API documents as invalid (rank 1..5, dims 1..2^32, strides multiples of 16
// below 2^40, box 1..256 with inner bytes a multiple of 16 and within the
// swizzle span), and writes the fields into the map's 128 bytes.
// tma_load_2d(dst, map, bar, c0, c1) is
// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes:
// box element (i, j) (i innermost) is global element (c0 + i, c1 + j), zero
// when outside the dims (coordinates may be negative); it lands at dst +
// j * inner_bytes + i * elem with, under a swizzle of S bytes, the 16-byte
// chunk bits of the shared address XORed as the hardware does from the
// address itself: 128B bits [4,7) ^= [7,10), 64B bits [4,6) ^= [7,9), 32B bit
// 4 ^= bit 7 (so a box that is not 1024-aligned under 128B lands as it would
// on the device, and the emulated wgmma reads it through the same
// addresses). dst must be 128-aligned; the box lands at issue, then its
// bytes complete_tx on bar. mbar_expect_tx is mbarrier.arrive.expect_tx: the
// arrival plus bytes the phase waits for; a phase completes when its
// arrivals are in and its transaction count is back to 0 (more bytes
// completed than expected aborts; fewer leave the phase pending and the
// kernel hangs, which run.sh's time limit reports; a plain mbar_arrive does
// not look at the bytes: barriers that count bytes take mbar_expect_tx
// arrivals). Only the inner box rows
// of exactly the swizzle span are modelled under a swizzle (else abort).
#define __grid_constant__
struct EmuTmap {
  const unsigned char *base;
  int rank, elem, swizzle; // swizzle in bytes: 0, 32, 64, 128
  uint64_t dim[5], stride[5];
  uint32_t box[5];
};
static_assert(sizeof(EmuTmap) <= 128, "a tensor map is 128 bytes");
inline bool emu_tmap_encode(void *map, int elem, int rank, const void *base,
                            const uint64_t *dim, const uint64_t *stride,
                            const uint32_t *box, int swizzle) {
  EmuTmap t{};
  memset(map, 0, 128);
  if (((uintptr_t)map & 63) || ((uintptr_t)base & 15) || rank < 1 || rank > 5 ||
      (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128))
    return false;
  t.base = (const unsigned char *)base;
  t.rank = rank;
  t.elem = elem;
  t.swizzle = swizzle;
  for (int d = 0; d < rank; d++) {
    if (dim[d] < 1 || dim[d] > (1ULL << 32) || box[d] < 1 || box[d] > 256)
      return false;
    t.dim[d] = dim[d];
    t.box[d] = box[d];
    if (d + 1 < rank) {
      if (stride[d] % 16 || stride[d] >= (1ULL << 40))
        return false;
      t.stride[d] = stride[d];
    }
  }
  uint32_t inner = box[0] * (uint32_t)elem;
  if (inner % 16 || (swizzle && inner > (uint32_t)swizzle))
    return false;
  memcpy(map, &t, sizeof t);
  return true;
}
inline std::unordered_map<uint32_t, long> g_mbar_tx; // under g_mbar_mu
// under g_mbar_mu: the phase completes when arrivals and bytes are all in
inline void emu_mbar_settle(uint32_t bar, MbarState &st) {
  long &tx = g_mbar_tx[bar];
  if (st.pending == 0 && tx < 0) {
    fprintf(stderr,
            "mbarrier 0x%x: more bytes completed than expect_tx announced\n",
            bar);
    abort();
  }
  if (st.pending == 0 && tx == 0) {
    st.pending = st.count;
    st.phase ^= 1;
  }
}
inline MbarState &emu_mbar(uint32_t bar) {
  auto it = g_mbar.find(bar);
  if (it == g_mbar.end()) {
    fprintf(stderr,
            "expect_tx/complete_tx on an uninitialized mbarrier at "
            "0x%x\n",
            bar);
    abort();
  }
  return it->second;
}
inline void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  std::lock_guard<std::mutex> g(g_mbar_mu);
  MbarState &st = emu_mbar(bar);
  g_mbar_tx[bar] += bytes;
  st.pending--;
  emu_mbar_settle(bar, st);
}
inline void mbar_fence_init() {}
inline void tma_prefetch(const void *) {} // prefetch.tensormap: a hint
// griddepcontrol: launches here run one after another, so the previous grid
// is complete and visible whenever a kernel starts (the overlap itself is the
// GPU run's to check: tests/integration/cuda.sh)
inline void pdl_trigger() {}
inline void pdl_wait() {}
inline void tma_load_2d(uint32_t dst, const void *map, uint32_t bar, int c0,
                        int c1) {
  EmuTmap t;
  memcpy(&t, map, sizeof t);
  if (t.rank != 2 || !t.base) {
    fprintf(stderr, "tma_load_2d: not a 2-D tensor map (rank %d%s)\n", t.rank,
            t.base ? "" : ", never encoded: a zero map");
    abort();
  }
  uint32_t inner = t.box[0] * (uint32_t)t.elem;
  if ((dst & 127) || (t.swizzle && inner != (uint32_t)t.swizzle)) {
    fprintf(stderr,
            "tma_load_2d: shared destination 0x%x not 128-aligned, or a "
            "swizzled box row of %u bytes (only the full span is modelled)\n",
            dst, inner);
    abort();
  }
  uint32_t bytes = inner * t.box[1];
  if (dst < EMU_SMEM_BASE || dst + bytes > EMU_SMEM_BASE + g_dyn_size) {
    fprintf(stderr,
            "tma_load_2d: box of %u bytes at shared 0x%x outside the "
            "%zu bytes\n",
            bytes, dst, g_dyn_size);
    abort();
  }
  for (uint32_t j = 0; j < t.box[1]; j++)
    for (uint32_t i = 0; i < t.box[0]; i++) {
      long x = (long)c0 + i, y = (long)c1 + j;
      uint32_t a = dst + j * inner + i * (uint32_t)t.elem;
      if (t.swizzle == 128)
        a ^= ((a >> 7) & 7) << 4;
      else if (t.swizzle == 64)
        a ^= ((a >> 7) & 3) << 4;
      else if (t.swizzle == 32)
        a ^= ((a >> 7) & 1) << 4;
      unsigned char *p = g_dyn + (a - EMU_SMEM_BASE);
      if (x >= 0 && y >= 0 && (uint64_t)x < t.dim[0] && (uint64_t)y < t.dim[1])
        memcpy(p, t.base + (uint64_t)y * t.stride[0] + (uint64_t)x * t.elem,
               t.elem);
      else
        memset(p, 0, t.elem);
    }
  std::lock_guard<std::mutex> g(g_mbar_mu);
  MbarState &st = emu_mbar(bar);
  g_mbar_tx[bar] -= bytes;
  emu_mbar_settle(bar, st);
}
