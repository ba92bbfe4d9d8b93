// ksearch: backend=cuda entry=gemm_bf16
// ksearch: family=wgmma_pipeline
// ksearch: concepts=tensor_core_mma,double_buffering_cp_async,tma_bulk_copy,shared_memory_tiling,warp_specialization,launch_bounds_occupancy
// ksearch: param TILE_N in 256,128
// ksearch: param WGS in 2,1
// ksearch: param MI in 1,2
// ksearch: param WS in 0,1
// ksearch: param TMA in 1,0
// ksearch: param STAGES in 4,3,5,6
// ksearch: param GROUP_M in 8,1,16
// ksearch: param PERSIST in 0,1
// ksearch: param SMS in 132
// ksearch: tensormap tma_a of=a box=(64, 64 * WGS * MI) swizzle=128
// ksearch: tensormap tma_b of=b box=(64, 64) swizzle=128
// ksearch: launch grid=(min(cdiv(m, 64 * WGS * MI) * cdiv(n, TILE_N), cdiv(m, 64 * WGS * MI) * cdiv(n, TILE_N) - PERSIST * (cdiv(m, 64 * WGS * MI) * cdiv(n, TILE_N) - SMS))) block=(128 * (WGS + max(WS, TMA))) smem=(STAGES * (64 * WGS * MI * 128 + 128 * TILE_N + 16) + 1024)
//
// CUDA template for tasks/gemm_bf16, family wgmma_pipeline (DESIGN.md:
// Templates): Hopper warpgroup MMA (wgmma.mma_async m64nNk16, sm_90a only)
// with both operands read by the tensor cores straight from shared memory
// through matrix descriptors. Threads fill a STAGES-deep ring of 64-deep k
// tiles with cp.async (16-byte chunks, zero-filled past the edges) directly
// in the 128-byte-swizzled layout the descriptors name; or, with TMA=1, one
// thread fills it with bulk tensor copies (below). A block owns a TILE_M x
// TILE_N tile of c, TILE_M = 64*WGS*MI: each of its WGS consumer warpgroups
// owns 64*MI rows and all TILE_N columns, as MI wgmma m64 blocks (MI = 2 with
// TILE_N = 256 would need 256 accumulator registers: refused). PERSIST=1
// caps the grid at SMS blocks (the H100/H200 SXM's 132 multiprocessors;
// correct for any SMS) that loop over the tiles. GROUP_M row tiles sweep the
// column tiles together (L2 reuse). k and n multiples of 8 take the cp.async
// path; other shapes fall back to element loads into the same layout, still
// exact.
//   WS=0: every warpgroup loads and computes; a block barrier per k tile;
//     wgmma wait_group 1 keeps one k tile's MMAs in flight, so the ring
//     holds the k tile read by them, the one just issued and STAGES-2 being
//     filled.
//   WS=1: one more warpgroup (the first) only loads; per slot a "full"
//     mbarrier (128 producer arrivals, each fired by
//     cp.async.mbarrier.arrive.noinc when that thread's copies land) and an
//     "empty" one (one arrival per consumer thread once its wgmma reading the
//     slot retired); no block barrier in the loop, all STAGES slots in use;
//     with PERSIST the ring runs on across a block's tiles, so the next
//     tile's loads overlap the epilogue. No setmaxnreg: at 384 threads the
//     cap is 168 registers, which the consumers' 128 accumulators fit without
//     spills, while a producer squeezed to 40-72 spilled.
//   TMA=1 (implies the WS=1 structure): the executor encodes the two tensor
//     maps of the header (a as (k, m), b as (n, k), innermost first, 128B
//     swizzle, zeros out of bounds) and passes them after the axes; one
//     thread of the producer warpgroup issues per k tile one
//     cp.async.bulk.tensor.2d of A (64 k x TILE_M rows, box (64, TILE_M))
//     and TILE_N/64 of B (64 n x 64 k each, one column atom), all completing
//     on the slot's full barrier (count 1: its arrive.expect_tx of
//     STAGE_BYTES, the bytes every box writes, zero-filled parts included).
//     The TMA writes exactly the swizzled layout below (its 128B swizzle is
//     the same XOR of address bits [4,7) with [7,10) of 1024-aligned slots).
//     Shapes whose rows are not 16-byte multiples (k or n % 8 != 0: the
//     executor passes zero maps then) take the cp.async/element path.
//
// Shared-memory layout of one stage (byte offsets from a 1024-aligned base;
// a 128-byte swizzle atom is 8 rows of 128 bytes, and 16-byte chunk j of row r
// of an atom is stored at chunk j ^ (r % 8), which is what the hardware's
// 128B swizzle undoes: address bits [4,7) XOR bits [7,10)):
//   A, K-major, TILE_M rows x 64 k (= 128 bytes, one atom row):
//     A(r, kc) at r*128 + ((kc/8) ^ (r%8))*16 + (kc%8)*2.
//     Descriptor (canonical K-major SW128: ((8,m),(8,2)):((64,SBO),(1,8)) in
//     elements): start = row block + kk*32 bytes for k step kk (the swizzle
//     applies to the summed address, so stepping inside the atom row is a
//     plain add), SBO = 1024 (next 8 rows), LBO unused (encoded 1).
//   B, MN-major (b is [k][n], n contiguous), 64 k rows x TILE_N n, stored
//     as TILE_N/64 column atoms of 64 k rows x 128 bytes (64 n each):
//     B(r, nc) at (nc/64)*8192 + r*128 + (((nc%64)/8) ^ (r%8))*16 + (nc%8)*2.
//     Descriptor (canonical MN-major SW128: ((8,8,m),(8,k)):((1,8,LBO),
//     (64,SBO)) in elements): start = kk*16 rows = kk*2048 bytes, LBO = 8192
//     (next 64 n), SBO = 1024 (next 8 k), and imm-trans-b = 1.
// Descriptor bits: [0,14) start >> 4, [16,30) LBO >> 4, [32,46) SBO >> 4,
// [49,52) base offset (0: every atom is 1024-aligned), [62,64) = 1 (128B).
// The 2*STAGES mbarriers (WS=1, TMA=1) sit in the first 16*STAGES bytes.
//
// Accumulator fragment of m64nNk16 .f32 (PTX ISA, wgmma register layout):
// thread t of the warpgroup, warp w = t/32, lane l holds N/2 floats d[j];
// j = 4*i + e (i in 0..N/8-1) is row 16*w + l/4 + 8*(e/2), column
// 8*i + 2*(l%4) + (e%2).
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef TILE_N
#define TILE_N 256
#endif
#ifndef WGS
#define WGS 2
#endif
#ifndef MI
#define MI 1
#endif
#ifndef WS
#define WS 0
#endif
#ifndef PERSIST
#define PERSIST 0
#endif
#ifndef SMS
#define SMS 132
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef TMA
#define TMA 1
#endif
#define PRODUCER (WS || TMA) /* a producer warpgroup */
#define TK 64 /* one 128-byte swizzle row of bf16 */
#define THREADS (128 * (WGS + PRODUCER))
#define LOADERS (PRODUCER ? 128 : THREADS) /* threads that fill the ring */
#define WG_M (64 * MI)               /* rows per consumer warpgroup */
#define TILE_M (WGS * WG_M)
#define NACC (TILE_N / 2) /* f32 accumulators per m64 block per thread */
#define A_BYTES (TILE_M * 128)
#define B_ATOM (TK * 128) /* one 64-wide column atom of B */
#define B_BYTES (TK * TILE_N * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define CPR (TILE_N / 8) /* 16-byte chunks per B row */
static_assert(TILE_N == 128 || TILE_N == 256, "TILE_N must be 128 or 256");
static_assert((WGS == 1 || WGS == 2) && (MI == 1 || MI == 2),
              "WGS, MI: 1 or 2");
static_assert(MI * NACC <= 128, "accumulators exceed 128 registers per thread");
static_assert(WS == 0 || WS == 1, "WS is 0 or 1");
static_assert(TMA == 0 || TMA == 1, "TMA is 0 or 1");
static_assert(STAGES >= (PRODUCER ? 2 : 3),
              "the ring needs a slot for the wgmma in flight");
static_assert(LOADERS % CPR == 0 && (TILE_M * 8) % LOADERS == 0 &&
                  (TK * CPR) % LOADERS == 0,
              "loads must split evenly over the threads");

// CUtensorMap (cuda.h): 128 opaque bytes the executor's
// cuTensorMapEncodeTiled filled, a __grid_constant__ kernel parameter
struct alignas(64) tmap_t {
  unsigned long long opaque[16];
};

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
// 16 bytes global -> shared; src_bytes 0 writes zeros (edges)
__device__ __forceinline__ void cp16(void *dst, const void *src,
                                     int src_bytes) {
  asm volatile(
      "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)),
      "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
// shared-memory writes (generic proxy: cp.async, st.shared) made visible to
// the async proxy the tensor cores read through
__device__ __forceinline__ void fence_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar),
               "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar)
               : "memory");
}
// one arrival on bar once every cp.async this thread issued so far has
// landed (noinc: the arrival is one of the count given to mbar_init)
__device__ __forceinline__ void cp_mbar_arrive(uint32_t bar) {
  asm volatile(
      "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar)
      : "memory");
}
// makes the mbarrier inits visible to the async proxy (the TMA's
// complete_tx) before any copy is issued
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// this thread's arrival on bar, and `bytes` more transaction bytes expected
// in the current phase (the bulk copies' complete_tx count them down)
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
      "r"(bytes)
      : "memory");
}
// TMA: the box of map at coordinates (c0 innermost, c1) into shared memory
// at dst (1024-aligned for the 128B swizzle); its bytes complete_tx on bar
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const tmap_t *map,
                                            uint32_t bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
               "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1)
               : "memory");
}
// the map's 128 bytes into the TMA unit's descriptor cache ahead of the
// first copy
__device__ __forceinline__ void tma_prefetch(const tmap_t *map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)map) : "memory");
}
// true once the phase of parity `parity` has completed
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile("{\n.reg .pred p;\n"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(ok)
               : "r"(bar), "r"(parity)
               : "memory");
  return ok != 0;
}
__device__ __forceinline__ void wg_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// keeps the compiler from moving accumulator reads/writes across the async
// wgmma that owns those registers until wait_group
template <int N> __device__ __forceinline__ void acc_fence(float *d) {
#pragma unroll
  for (int i = 0; i < N; i++)
    asm volatile("" : "+f"(d[i])::"memory");
}
// d[0..N/2) += A(64x16, K-major, descriptor da) * B(16xN, MN-major, db)
template <int N>
__device__ __forceinline__ void wgmma_bf16(float *d, uint64_t da, uint64_t db) {
  if constexpr (N == 256) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, "
        "%56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, "
        "%72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, "
        "%88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, "
        "%104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, "
        "%120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]),
          "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),
          "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
          "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
          "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]),
          "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
          "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
          "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
          "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]),
          "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),
          "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
          "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]),
          "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]),
          "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
          "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]),
          "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]),
          "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(1));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, "
        "%56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]),
          "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),
          "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
          "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
          "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]),
          "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
          "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
          "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(1));
  }
}

// 128B-swizzle descriptor of a 1024-aligned-atom operand at shared address
// addr (bytes); lbo and sbo in bytes
__device__ __forceinline__ uint64_t make_desc(uint32_t addr, uint32_t lbo,
                                              uint32_t sbo) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) |
         (uint64_t)((lbo >> 4) & 0x3FFF) << 16 |
         (uint64_t)((sbo >> 4) & 0x3FFF) << 32 | (uint64_t)1 << 62;
}
// byte offsets of element (row, col) in the swizzled A and B stage layouts
__device__ __forceinline__ int a_off(int r, int kc) {
  return r * 128 + (((kc >> 3) ^ (r & 7)) << 4) + (kc & 7) * 2;
}
__device__ __forceinline__ int b_off(int r, int nc) {
  return (nc >> 6) * B_ATOM + r * 128 + ((((nc & 63) >> 3) ^ (r & 7)) << 4) +
         (nc & 7) * 2;
}

// one 64-deep k tile of A (TILE_M x TK) and B (TK x TILE_N) into a stage, by
// the LOADERS threads tid = 0..LOADERS-1
__device__ __forceinline__ void load_tile(unsigned char *sa, unsigned char *sb,
                                          const __nv_bfloat16 *a,
                                          const __nv_bfloat16 *b, long m,
                                          long n, long k, long m0, long n0,
                                          long k0, bool vec, int tid) {
  if (vec) {
    // A: 8 threads per 128-byte row (coalesced); this thread's chunk ja
    const int ja = tid & 7;
    const long gka = k0 + ja * 8;
#pragma unroll
    for (int i = 0; i < TILE_M * 8 / LOADERS; i++) {
      int r = tid / 8 + i * (LOADERS / 8);
      long gr = m0 + r;
      bool in = gr < m && gka < k;
      cp16(sa + r * 128 + ((ja ^ (r & 7)) << 4),
           in ? (const void *)(a + gr * k + gka) : (const void *)a,
           in ? 16 : 0);
    }
    // B: CPR threads per k row; this thread's chunk jb of TILE_N / 8
    const int jb = tid % CPR;
    const long gn = n0 + jb * 8;
    unsigned char *sbj = sb + (jb >> 3) * B_ATOM;
#pragma unroll
    for (int i = 0; i < TK * CPR / LOADERS; i++) {
      int r = tid / CPR + i * (LOADERS / CPR);
      long gk = k0 + r;
      bool in = gk < k && gn < n;
      cp16(sbj + r * 128 + (((jb & 7) ^ (r & 7)) << 4),
           in ? (const void *)(b + gk * n + gn) : (const void *)b, in ? 16 : 0);
    }
  } else {
    const __nv_bfloat16 z = __float2bfloat16(0.f);
    for (int c = tid; c < TILE_M * TK; c += LOADERS) {
      int r = c / TK, kc = c % TK;
      long gr = m0 + r, gk = k0 + kc;
      *(__nv_bfloat16 *)(sa + a_off(r, kc)) =
          gr < m && gk < k ? a[gr * k + gk] : z;
    }
    for (int c = tid; c < TK * TILE_N; c += LOADERS) {
      int r = c / TILE_N, nc = c % TILE_N;
      long gk = k0 + r, gn = n0 + nc;
      *(__nv_bfloat16 *)(sb + b_off(r, nc)) =
          gk < k && gn < n ? b[gk * n + gn] : z;
    }
  }
}

// the wgmmas of one k tile at stage address st for consumer warpgroup cw
__device__ __forceinline__ void mma_tile(float (*acc)[NACC], uint32_t st,
                                         int cw) {
  const uint32_t a_at = st + cw * WG_M * 128, b_at = st + A_BYTES;
#pragma unroll
  for (int i = 0; i < MI; i++)
    acc_fence<NACC>(acc[i]);
  wg_fence();
#pragma unroll
  for (int kk = 0; kk < TK / 16; kk++)
#pragma unroll
    for (int i = 0; i < MI; i++)
      wgmma_bf16<TILE_N>(acc[i],
                         make_desc(a_at + i * 64 * 128 + kk * 32, 16, 1024),
                         make_desc(b_at + kk * 16 * 128, B_ATOM, 1024));
  wg_commit();
#pragma unroll
  for (int i = 0; i < MI; i++)
    acc_fence<NACC>(acc[i]);
}

// origin (m0, n0) of tile t in the grouped order: GROUP_M row tiles sweep the
// column tiles together (L2 reuse)
__device__ __forceinline__ void tile_origin(long t, long m, long n, long *m0,
                                            long *n0) {
  const long tiles_m = (m + TILE_M - 1) / TILE_M,
             tiles_n = (n + TILE_N - 1) / TILE_N;
  const long per_group = (long)GROUP_M * tiles_n,
             first_m = (t / per_group) * GROUP_M;
  const long gsize = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
  *m0 = (first_m + (t % per_group) % gsize) * TILE_M;
  *n0 = ((t % per_group) / gsize) * TILE_N;
}

// consumer warpgroup cw's accumulators -> c, bf16 nearest even; accumulator
// j = 4*q + e: row 16*w + l/4 + 8*(e/2), col 8*q + 2*(l%4) + e%2
__device__ __forceinline__ void store_tile(float (*acc)[NACC], __nv_bfloat16 *c,
                                           long m, long n, long m0, long n0,
                                           int cw, int wt) {
  const int w = wt >> 5, l = wt & 31;
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int j = 0; j < NACC; j += 2) {
      const int q = j >> 2, h = (j >> 1) & 1;
      long r = m0 + cw * WG_M + i * 64 + w * 16 + (l >> 2) + h * 8;
      long col = n0 + q * 8 + (l & 3) * 2;
      if (r >= m)
        continue;
      float v0 = acc[i][j], v1 = acc[i][j + 1];
      if (col + 1 < n && n % 2 == 0) {
        *(__nv_bfloat162 *)(c + r * n + col) = __floats2bfloat162_rn(v0, v1);
      } else {
        if (col < n)
          c[r * n + col] = __float2bfloat16_rn(v0);
        if (col + 1 < n)
          c[r * n + col + 1] = __float2bfloat16_rn(v1);
      }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_bf16(const __nv_bfloat16 *__restrict__ a,
              const __nv_bfloat16 *__restrict__ b,
              __nv_bfloat16 *__restrict__ c, long m, long n, long k,
              const __grid_constant__ tmap_t tma_a,
              const __grid_constant__ tmap_t tma_b) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  // the mbarriers first; then the stages: the 128B swizzle is a function of
  // address bits [4,10), so atoms start at 1024-byte shared addresses (the
  // launch asks for 1024 bytes extra)
  const uint32_t raw = smem_u32(smem_raw);
  unsigned char *sm = smem_raw + (((raw + 16 * STAGES + 1023) & ~1023u) - raw);
  const uint32_t sbase = smem_u32(sm);

  // a block takes tiles blockIdx.x, + gridDim.x, ... (one each unless
  // PERSIST caps the grid at SMS blocks)
  const long tiles = ((m + TILE_M - 1) / TILE_M) * ((n + TILE_N - 1) / TILE_N);
  const int wg = threadIdx.x >> 7, wt = threadIdx.x & 127;
  const int cw = wg - PRODUCER; // consumer warpgroup (-1: the producer)
  const bool vec = (k % 8 == 0) && (n % 8 == 0);
  const long ktiles = (k + TK - 1) / TK;
  long m0, n0;
  float acc[MI][NACC];

#if PRODUCER
  // TMA only where the executor could encode the maps (rows of 16-byte
  // multiples); else the cp.async or element path below
  const bool tma = TMA && vec;
  // full[s] at raw + 8s, empty[s] at raw + 8(STAGES + s); g counts k tiles
  // over all of the block's tiles, so the ring runs on across tiles and the
  // producer fills the next tile's first slots during the epilogue
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      mbar_init(raw + 8 * s, tma ? 1 : 128);
      mbar_init(raw + 8 * (STAGES + s), 128 * WGS);
    }
    mbar_fence_init();
  }
  __syncthreads();
  long g = 0;
  if (cw < 0 && tma) {
    // one thread issues every copy: per k tile g, slot g % STAGES once its
    // empty phase of round g / STAGES - 1 completed (as below)
    if (wt != 0)
      return;
    tma_prefetch(&tma_a);
    tma_prefetch(&tma_b);
    for (long t = blockIdx.x; t < tiles; t += gridDim.x) {
      tile_origin(t, m, n, &m0, &n0);
      for (long kt = 0; kt < ktiles; kt++, g++) {
        const int s = (int)(g % STAGES);
        const uint32_t full = raw + 8 * s;
        while (!mbar_try_wait(raw + 8 * (STAGES + s),
                              ((uint32_t)(g / STAGES) & 1) ^ 1))
          ;
        const uint32_t st = sbase + s * STAGE_BYTES;
        mbar_expect_tx(full, STAGE_BYTES);
        tma_load_2d(st, &tma_a, full, (int)(kt * TK), (int)m0);
#pragma unroll
        for (int j = 0; j < TILE_N / 64; j++)
          tma_load_2d(st + A_BYTES + j * B_ATOM, &tma_b, full,
                      (int)(n0 + 64 * j), (int)(kt * TK));
      }
    }
    return;
  }
  if (cw < 0) {
    // producer: k tile g into slot g % STAGES once the tile that used the
    // slot before retired (the empty phase of round g / STAGES - 1; a fresh
    // barrier counts its phase of parity 1 as done)
    for (long t = blockIdx.x; t < tiles; t += gridDim.x) {
      tile_origin(t, m, n, &m0, &n0);
      for (long kt = 0; kt < ktiles; kt++, g++) {
        const int s = (int)(g % STAGES);
        while (!mbar_try_wait(raw + 8 * (STAGES + s),
                              ((uint32_t)(g / STAGES) & 1) ^ 1))
          ;
        unsigned char *st = sm + s * STAGE_BYTES;
        load_tile(st, st + A_BYTES, a, b, m, n, k, m0, n0, kt * TK, vec, wt);
        if (vec)
          cp_mbar_arrive(raw + 8 * s);
        else
          mbar_arrive(raw + 8 * s); // plain stores: a release arrival
      }
    }
    cp_wait<0>();
    return;
  }
  for (long t = blockIdx.x; t < tiles; t += gridDim.x) {
    tile_origin(t, m, n, &m0, &n0);
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
      for (int j = 0; j < NACC; j++)
        acc[i][j] = 0.f;
    for (long kt = 0; kt < ktiles; kt++, g++) {
      const int s = (int)(g % STAGES);
      while (!mbar_try_wait(raw + 8 * s, (uint32_t)(g / STAGES) & 1))
        ;
      fence_async(); // the landed copies, seen here, to the async proxy
      mma_tile(acc, sbase + s * STAGE_BYTES, cw);
      wg_wait<1>(); // k tile g-1's wgmmas are done: its slot is free
#pragma unroll
      for (int i = 0; i < MI; i++)
        acc_fence<NACC>(acc[i]);
      if (kt > 0)
        mbar_arrive(raw + 8 * (STAGES + (int)((g - 1) % STAGES)));
    }
    wg_wait<0>();
#pragma unroll
    for (int i = 0; i < MI; i++)
      acc_fence<NACC>(acc[i]);
    if (ktiles > 0) // the tile's last slot
      mbar_arrive(raw + 8 * (STAGES + (int)((g - 1) % STAGES)));
    store_tile(acc, c, m, n, m0, n0, cw, wt);
  }
#else
  for (long t = blockIdx.x; t < tiles; t += gridDim.x) {
    tile_origin(t, m, n, &m0, &n0);
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
      for (int j = 0; j < NACC; j++)
        acc[i][j] = 0.f;
    // the previous tile's wgmmas of every warpgroup are done before its
    // slots are refilled
    __syncthreads();
    // prologue: k tiles 0..STAGES-3, one cp.async group each (empty past k)
#pragma unroll
    for (int s = 0; s < STAGES - 2; s++) {
      if (s < ktiles)
        load_tile(sm + s * STAGE_BYTES, sm + s * STAGE_BYTES + A_BYTES, a, b, m,
                  n, k, m0, n0, (long)s * TK, vec, threadIdx.x);
      cp_commit();
    }
    for (long kt = 0; kt < ktiles; kt++) {
      // STAGES-2+kt groups are committed, k tile kt is group kt: at most
      // STAGES-3 younger ones may still be in flight
      cp_wait<STAGES - 3>();
      fence_async();
      // every thread's part of k tile kt is in; every warpgroup has retired
      // its wgmma of k tile kt-2 (wait_group 1 at the end of iteration
      // kt-1), so slot (kt-2) % STAGES may be refilled below
      __syncthreads();
      mma_tile(acc, sbase + (uint32_t)(kt % STAGES) * STAGE_BYTES, cw);
      const long nk = kt + STAGES - 2;
      if (nk < ktiles) {
        unsigned char *s = sm + (nk % STAGES) * STAGE_BYTES;
        load_tile(s, s + A_BYTES, a, b, m, n, k, m0, n0, nk * TK, vec,
                  threadIdx.x);
      }
      cp_commit();
      wg_wait<1>(); // the wgmma of k tile kt-1 is done, kt's may run on
#pragma unroll
      for (int i = 0; i < MI; i++)
        acc_fence<NACC>(acc[i]);
    }
    cp_wait<0>();
    wg_wait<0>();
#pragma unroll
    for (int i = 0; i < MI; i++)
      acc_fence<NACC>(acc[i]);
    store_tile(acc, c, m, n, m0, n0, cw, wt);
  }
#endif
}
