// ksearch: backend=cuda entry=attention_prefill
// ksearch: family=wgmma_flash
// ksearch: concepts=online_softmax,tensor_core_mma,double_buffering_cp_async,tma_bulk_copy,shared_memory_tiling,launch_bounds_occupancy
// ksearch: param WGS in 2,1,3
// ksearch: param BKV in 128,64
// ksearch: param STAGES in 2,3
// ksearch: param OVERLAP in 1,0
// ksearch: param WS in 2,1,0
// ksearch: param LPT in 1,0
// ksearch: param TMA in 1,0
// ksearch: param PERSIST in 0,132
// ksearch: tensormap tma_q of=q box=(64, 64 * WGS) swizzle=128 view=(head_dim, batch * heads_q * seqlen)
// ksearch: tensormap tma_k of=k box=(64, BKV) swizzle=128 view=(head_dim, batch * heads_kv * seqlen)
// ksearch: tensormap tma_v of=v box=(64, BKV) swizzle=128 view=(head_dim, batch * heads_kv * seqlen)
// ksearch: launch grid=(cdiv(seqlen, 64 * WGS), heads_q, batch) block=(128 * WGS + 128 * min(WS, 1), 1, 1) smem=((64 * WGS + 2 * (STAGES + OVERLAP) * BKV) * head_dim * 2 + 1024 + 16 * (STAGES + OVERLAP) + 16) when=(1 - min(PERSIST, 1))
// ksearch: launch grid=(min(PERSIST, cdiv(seqlen, 64 * WGS) * heads_q * batch), 1, 1) block=(128 * WGS + 128 * min(WS, 1), 1, 1) smem=((64 * WGS + 2 * (STAGES + OVERLAP) * BKV) * head_dim * 2 + 1024 + 16 * (STAGES + OVERLAP) + 16) when=(min(PERSIST, 1))
//
// CUDA template for tasks/attention_prefill, family wgmma_flash (DESIGN.md:
// Templates): FlashAttention-3-style forward on Hopper warpgroup MMA
// (wgmma.mma_async m64nNk16 bf16 -> f32, sm_90a only). A block owns
// BQ = 64*WGS queries of one (batch, q head), one warpgroup (128 threads) per
// 64 of them. K/V tiles of BKV keys stream through a ring of
// NSLOT = STAGES + OVERLAP shared-memory slots, filled by cp.async 16-byte
// copies (zeros past the sequence end) directly in the 128-byte-swizzled
// layout the wgmma descriptors name, or (TMA=1, the default: with WS=1 or 2;
// WS=0 loads by cp.async whatever TMA says; on the H200 TMA=1 ran 1.01-1.09x
// the cp.async producer, 643 TFLOP/s at S 16384, 2026-12-05) by bulk
// tensor copies: the executor encodes the three maps of the header (q, k, v
// each viewed as [rows of all heads, head_dim], 128B swizzle, boxes of 64
// columns: the TMA writes exactly the layout below), and one thread of the
// producer warpgroup issues a tile's D/64 K and D/64 V boxes on the slot's
// full barrier (count 1: its arrive.expect_tx of the tile's bytes; Q's boxes
// with tile 0), so 127 producer threads and their address arithmetic are
// gone from the SM. A tile past the sequence end reads the next head's rows
// (masked like the zeros of cp.async: those keys pass every row; their P is
// 0) or, past the tensor, zeros.
//   WS=0: every thread loads; a tile is loaded STAGES - 1 iterations before
//     it is first read, and one block barrier per tile hands the slot of the
//     previous tile back.
//   WS=1: one more warpgroup (the last) only loads, through full/empty
//     mbarriers per slot (the producer's copies arrive on "full" by
//     cp.async.mbarrier.arrive.noinc as they land; every consumer thread
//     arrives on "empty" once its wgmmas reading the slot retired), so the
//     consumer warpgroups never wait for each other and drift apart (one's
//     softmax beside another's wgmmas); setmaxnreg gives the producer 40
//     registers and the WGS >= 2 consumers (512 - 40) / WGS (<= 240).
//   WS=2: WS=1 plus FA3's inter-warpgroup pingpong: consumer warpgroups
//     take turns to issue their wgmmas (named barriers 4 + w of 256
//     threads: w syncs, w-1 arrives once it issued), so one warpgroup's
//     softmax runs while the next one's wgmmas occupy the tensor cores.
//   S = Q K^T: wgmma with A = the warpgroup's 64 Q rows and B = the K tile,
//     both K-major from shared memory (Q loaded once), N = BKV.
//   Online softmax on the S accumulators in float32: a row's max over the 4
//     lanes that share it (2 shuffles), exp2 with the scale folded into
//     log2 e (ex2.approx), the row sum kept lane-partial until the end.
//   O += P V: P converted to bf16 in registers, which is already wgmma's A
//     fragment (the accumulator layout of S over 16 keys is the A register
//     layout), so P never touches shared memory; B = the V tile, MN-major
//     (imm-trans-b 1: V is [keys, head_dim], head_dim contiguous), N = D.
//   OVERLAP=1 (FA3's intra-warpgroup pipelining): the S wgmmas of tile t+1
//     and the P V wgmmas of tile t are issued together; the softmax of t+1
//     runs while P V of t is still on the tensor cores, and the rescale of O
//     it asks for runs beside the next S, before the next P V. Needs the
//     next tile in the ring too: one more slot.
//   PERSIST=N (with WS=1 or 2): N resident blocks (132: one per H200 SM;
//     any N is correct) instead of a block per query tile; block i takes
//     work items i, i + N, ... of the longest-first order (LPT below). Slot
//     uses count on across a block's items, so a slot's parity carries over;
//     Q has its own full/empty mbarrier pair (empty: every consumer thread
//     once its output left the Q region it is staged through), so with TMA=1
//     the producer has the next item's first K/V tile in flight while the
//     consumers finish the last item's P V and write O (cp.async: Q first,
//     then the tiles, as Q's offsets would otherwise spill the producer's 40
//     registers). What it saves: a block's launch, barrier set-up and first
//     load latency per item, and the tail of a wave.
// Causal: a block reads key tiles up to its last query, and so do all its
// warpgroups (bounds uniform in the block: ptxas serializes wgmmas it sees
// issued on divergent paths); only tiles crossing a warpgroup's diagonal or
// the sequence end are masked; tile 0 is always first, so a row's max is
// finite before any masked key (no exp(-inf - -inf)), and a row that sees
// none of a later tile keeps its max and adds zeros. Blocks run the last
// query tile first (the longest). GQA: q head h reads kv head
// h / (heads_q / heads_kv). head_dim 64 or 128 (compile-time instances;
// others trap: a launch error, never a wrong answer). O / l goes through the
// warpgroup's own Q rows in shared memory, then out in coalesced 16-byte
// rows after a barrier of the warpgroup's threads only.
//
// Shared memory (byte offsets from a 1024-aligned base; a 128B swizzle atom
// is 8 rows of 128 bytes, 16-byte chunk j of row r stored at chunk j ^ (r%8),
// which the hardware's 128B swizzle undoes: address bits [4,7) ^= [7,10)):
// Q, then slot i's K and V tiles. Each is a [rows, D] row-major bf16 matrix
// stored as D/64 column blocks of rows x 128 bytes (64 columns each):
//   X(r, c) at (c/64)*rows*128 + r*128 + (((c%64)/8) ^ (r%8))*16 + (c%8)*2.
// Descriptors (bits [0,14) start >> 4, [16,30) LBO >> 4, [32,46) SBO >> 4,
// [62,64) = 1: 128B swizzle; base offset 0 as every atom is 1024-aligned):
//   Q (A, K-major) for k step kk: start = Q + (kk/4)*BQ*128 + wg*64*128 +
//     (kk%4)*32, SBO = 1024 (next 8 rows), LBO unused.
//   K (B of S, K-major: B(k=d, n=key) = K(key, d)): start = K +
//     (kk/4)*BKV*128 + (kk%4)*32, SBO = 1024 (next 8 keys), imm-trans-b 0.
//   V (B of P V, MN-major: B(k=key, n=d) = V(key, d)) for key step kk:
//     start = V + kk*16*128, LBO = BKV*128 (next 64 columns of d),
//     SBO = 1024 (next 8 keys), imm-trans-b 1.
// Accumulators (PTX ISA wgmma D fragment): thread t of the warpgroup, warp
// w = t/32, lane l holds N/2 floats; j = 4*i + e is row 16*w + l/4 + 8*(e/2),
// column 8*i + 2*(l%4) + e%2. The A fragment of a 16-wide k step kk is
// {S[8kk..8kk+1], S[8kk+2..3], S[8kk+4..5], S[8kk+6..7]} packed to bf16 pairs.
//
// Registers: O (D/2) + S (BKV/2) + P (BKV/4) per thread, 160 at D = BKV =
// 128 (ptxas 13, both head_dim instances: WS=0 WGS=2 220 with OVERLAP, 194
// without, BKV=64 154; WGS=3 caps a thread at 168; WS>0 reports 168 at
// WGS=2 (the consumers run under setmaxnreg 232), no spills but 56-64 bytes
// at WS>0 WGS=3 BKV=64 OVERLAP=1 since the work-item loop, 4-8 before). A
// thread's cp.async chunks differ by constant offsets (load_rows) and
// descriptors are one add from a base, which keeps addresses out of the
// register budget. Refused at compile time: shared memory at D=128, (BQ +
// 2*NSLOT*BKV)*256 + 1024 + 16*NSLOT bytes, past 232448 (227 KiB: BKV=128 with
// NSLOT=4; WGS=3, BKV=128 with NSLOT=3), and WS>0 with WGS=3 and BKV=128 (152
// consumer registers: spills), WS=2 with WGS=1 (no second warpgroup to take
// turns with: that is WS=1).
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef WGS
#define WGS 2
#endif
#ifndef BKV
#define BKV 128
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef OVERLAP
#define OVERLAP 1
#endif
#ifndef LPT
#define LPT 1
#endif
#ifndef WS
#define WS 2
#endif
#ifndef TMA
#define TMA 1
#endif
#ifndef PERSIST
#define PERSIST 0
#endif
#define BQ (64 * WGS)
#define CTHREADS (128 * WGS) /* the consumer warpgroups */
#define PRODUCER (WS > 0)
#define THREADS (CTHREADS + 128 * PRODUCER) /* and the producer warpgroup */
#define PINGPONG (WS == 2 && WGS > 1)
#define NSLOT (STAGES + OVERLAP)
// WS=1 register split (setmaxnreg): per SM sub-partition, one warp of each
// warpgroup shares 512 registers per lane
#define PRODUCER_REGS 40
#define CONSUMER_REGS                                                          \
  ((512 - PRODUCER_REGS) / WGS / 8 * 8 > 240                                   \
       ? 240                                                                   \
       : (512 - PRODUCER_REGS) / WGS / 8 * 8)
static_assert(WGS >= 1 && WGS <= 3, "WGS is 1, 2 or 3");
static_assert(BKV == 64 || BKV == 128, "BKV is 64 or 128");
static_assert(STAGES >= 2, "a tile loads at least one iteration ahead");
static_assert(OVERLAP == 0 || OVERLAP == 1, "OVERLAP is 0 or 1");
static_assert(WS >= 0 && WS <= 2, "WS is 0, 1 or 2");
// TMA=1 with WS=0: no producer thread to issue bulk copies, so every thread
// loads by cp.async as with TMA=0 (the TMA code is all in the producer)
static_assert(TMA == 0 || TMA == 1, "TMA is 0 or 1");
static_assert(PERSIST == 0 || WS > 0,
              "PERSIST needs the producer warpgroup (WS=1 or 2)");
static_assert(!(WS == 2 && WGS == 1),
              "pingpong needs 2 or 3 consumer warpgroups (WGS=1: use WS=1)");
static_assert(!(WS && WGS == 3 && BKV == 128),
              "3 consumer warpgroups get 152 registers: spills at BKV 128");
// refused rather than a launch error: the ring must fit the 227 KiB of
// shared memory a block may have at head_dim 128 (every GPU workload but one)
static_assert((64 * WGS + 2 * NSLOT * BKV) * 256 + 1024 + 16 * NSLOT + 16 <=
                  232448,
              "Q and NSLOT K/V slots exceed 227 KiB at head_dim 128");

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
// CUtensorMap (cuda.h): 128 opaque bytes the executor's
// cuTensorMapEncodeTiled filled, a __grid_constant__ kernel parameter
struct alignas(64) tmap_t {
  unsigned long long opaque[16];
};
// 16 bytes global -> shared; src_bytes 0 writes zeros (past the end)
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
// shared-memory writes (generic proxy: cp.async) made visible to the async
// proxy the tensor cores read through
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
// setmaxnreg (warp specialization): a warpgroup gives registers back to the
// pool or takes more; every thread of the warpgroup executes it
template <int N> __device__ __forceinline__ void reg_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void reg_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
// FA3's inter-warpgroup pingpong (WS=2): named barrier 4 + w (256 threads)
// passes the turn to issue wgmmas to consumer warpgroup w: w syncs on it,
// the warpgroup before w (cyclically) arrives on it once it issued its own
__device__ __forceinline__ void pp_sync(int w) {
  if (w == 0)
    asm volatile("bar.sync 4, 256;\n" ::: "memory");
  else if (w == 1)
    asm volatile("bar.sync 5, 256;\n" ::: "memory");
  else
    asm volatile("bar.sync 6, 256;\n" ::: "memory");
}
__device__ __forceinline__ void pp_arrive(int w) {
  if (w == 0)
    asm volatile("bar.arrive 4, 256;\n" ::: "memory");
  else if (w == 1)
    asm volatile("bar.arrive 5, 256;\n" ::: "memory");
  else
    asm volatile("bar.arrive 6, 256;\n" ::: "memory");
}
// a barrier of warpgroup wg's 128 threads (named barrier 1 + wg; immediate
// ids, so ptxas reserves only the barriers used)
__device__ __forceinline__ void wg_bar(int wg) {
  if (wg == 0)
    asm volatile("bar.sync 1, 128;\n" ::: "memory");
  else if (wg == 1)
    asm volatile("bar.sync 2, 128;\n" ::: "memory");
  else
    asm volatile("bar.sync 3, 128;\n" ::: "memory");
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
// keep the compiler from moving reads/writes of registers an async wgmma
// owns (accumulators, A fragments) across its issue and wait_group
template <int N> __device__ __forceinline__ void acc_fence(float *d) {
#pragma unroll
  for (int i = 0; i < N; i++)
    asm volatile("" : "+f"(d[i])::"memory");
}
template <int N> __device__ __forceinline__ void reg_fence(uint32_t *r) {
#pragma unroll
  for (int i = 0; i < N; i++)
    asm volatile("" : "+r"(r[i])::"memory");
}
// 2^x (ex2.approx.ftz: subnormal results flush to zero, 2^-inf = 0)
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
// d[0..N/2) (+)= A(64x16, K-major, descriptor da) * B(16xN, K-major, db);
// scale_d 0 overwrites d
template <int N>
__device__ __forceinline__ void wgmma_ss(float *d, uint64_t da, uint64_t db,
                                         int scale_d) {
  if constexpr (N == 64) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
                 "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, "
                 "%26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]),
                   "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),
                   "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
                   "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
                   "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "r"(scale_d));
  } else if constexpr (N == 128) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
        "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, "
        "%29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "
        "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, "
        "%57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
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
        : "l"(da), "l"(db), "r"(scale_d));
  }
}
// d[0..N/2) (+)= A(64x16 in registers: the wgmma A fragment) * B(16xN,
// MN-major, db); scale_d 0 overwrites d
template <int N>
__device__ __forceinline__ void wgmma_rs(float *d, const uint32_t *a,
                                         uint64_t db, int scale_d) {
  if constexpr (N == 64) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
        "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, "
        "%29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]),
          "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),
          "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
          "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
          "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
  } else if constexpr (N == 128) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
        "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, "
        "%29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "
        "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, "
        "%57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, "
        "1, 1;\n}\n"
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
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));
  }
}

// 128B-swizzle descriptor of an operand at shared address a4 * 16 (a4: the
// address >> 4, so a descriptor at base + offset is one add); lbo, sbo in
// bytes
__device__ __forceinline__ uint64_t make_desc(uint32_t a4, uint32_t lbo,
                                              uint32_t sbo) {
  return (uint64_t)(((sbo >> 4) & 0x3FFF) | 1u << 30) << 32 |
         (uint64_t)(((lbo >> 4) & 0x3FFF) << 16 | (a4 & 0x3FFF));
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *(uint32_t *)&h;
}

// rows [r0, r0 + ROWS) of a [seqlen, D] head into the swizzled layout at dst
// (zeros past seqlen), and with TWO the same rows of a second head into
// dst2, by NT threads (tid = 0..NT-1). Thread tid copies 16-byte chunk
// tid % (D/8) of rows tid / (D/8) + i * RPP: consecutive threads take
// consecutive chunks of a row (coalesced); when RPP is a multiple of 8 the
// swizzled column of a thread's chunks is fixed, so its copies differ by
// constant offsets only
template <int D, int ROWS, bool TWO, int NT>
__device__ __forceinline__ void
load_rows(unsigned char *dst, const __nv_bfloat16 *src, unsigned char *dst2,
          const __nv_bfloat16 *src2, long r0, long seqlen, int tid) {
  constexpr int CPR = D / 8, RPP = NT / CPR;
  static_assert(NT % CPR == 0, "whole rows per pass");
  const int r = tid / CPR, j = tid % CPR;
  const int doff = (j >> 3) * (ROWS * 128) + r * 128;
  const long soff = (r0 + r) * D + j * 8, left = seqlen - r0 - r;
#pragma unroll
  for (int i = 0; i < (ROWS + RPP - 1) / RPP; i++) {
    if (ROWS % RPP == 0 || r + i * RPP < ROWS) {
      const bool in = i * RPP < left;
      const long so = in ? soff + (long)i * RPP * D : 0;
      const int d =
          doff + i * RPP * 128 + (((j & 7) ^ ((r + i * RPP) & 7)) << 4);
      cp16(dst + d, src + so, in ? 16 : 0);
      if (TWO)
        cp16(dst2 + d, src2 + so, in ? 16 : 0);
    }
  }
}

// S = Q K^T for this warpgroup: q4 = its Q rows, kt4 = the K tile (shared
// addresses >> 4); issued, not committed
template <int D>
__device__ __forceinline__ void s_gemm(float *s, uint32_t q4, uint32_t kt4) {
#pragma unroll
  for (int kk = 0; kk < D / 16; kk++)
    wgmma_ss<BKV>(
        s, make_desc(q4 + (kk >> 2) * (BQ * 8) + (kk & 3) * 2, 16, 1024),
        make_desc(kt4 + (kk >> 2) * (BKV * 8) + (kk & 3) * 2, 16, 1024),
        kk > 0);
}
// O += P V: p = P's A fragments (16 keys each), vt4 = the V tile >> 4
template <int D>
__device__ __forceinline__ void pv_gemm(float *o, uint32_t (*p)[4],
                                        uint32_t vt4) {
#pragma unroll
  for (int kk = 0; kk < BKV / 16; kk++)
    wgmma_rs<D>(o, p[kk], make_desc(vt4 + kk * 128, BKV * 128, 1024), 1);
}

// online softmax of one S tile (keys j0..j0+BKV-1) for this thread's rows
// row0 and row0 + 8: masks keys past the row or the sequence (MASK), updates
// the running max m and lane-partial sum l, turns s into probabilities and
// returns the factor the old O and l are scaled by in corr
template <bool MASK>
__device__ __forceinline__ void softmax_tile(float *s, float *m, float *l,
                                             float *corr, long j0, long row0,
                                             long seqlen, float sl2) {
  const int qd = threadIdx.x & 3;
#pragma unroll
  for (int hh = 0; hh < 2; hh++) {
    float mx = m[hh];
    // keys j0 + 8i + 2qd + e are visible while 8i + e <= lim
    long last = row0 + 8 * hh < seqlen - 1 ? row0 + 8 * hh : seqlen - 1;
    const long lim = last - j0 - 2 * qd;
#pragma unroll
    for (int i = 0; i < BKV / 8; i++)
#pragma unroll
      for (int e = 0; e < 2; e++) {
        float &x = s[4 * i + 2 * hh + e];
        if (MASK && 8 * i + e > lim)
          x = -INFINITY;
        mx = fmaxf(mx, x);
      }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    // mx is finite: key 0 (tile 0, seen first) is visible to every row; the
    // first tile's old max is -inf, so corr = 0 there (O and l are 0)
    corr[hh] = ex2((m[hh] - mx) * sl2);
    m[hh] = mx;
    const float ms = mx * sl2;
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < BKV / 8; i++)
#pragma unroll
      for (int e = 0; e < 2; e++) {
        float &x = s[4 * i + 2 * hh + e];
        x = ex2(fmaf(x, sl2, -ms));
        sum += x;
      }
    l[hh] = l[hh] * corr[hh] + sum;
  }
}
__device__ __forceinline__ void softmax_any(float *s, float *m, float *l,
                                            float *corr, long j0, long qw0,
                                            long row0, long seqlen, float sl2) {
  // masks only where a key of the tile can pass a row of the warpgroup or
  // the sequence end
  if (j0 + BKV - 1 > qw0 || j0 + BKV > seqlen)
    softmax_tile<true>(s, m, l, corr, j0, row0, seqlen, sl2);
  else
    softmax_tile<false>(s, m, l, corr, j0, row0, seqlen, sl2);
}
// O *= corr per row (this thread's rows row0, row0 + 8)
__device__ __forceinline__ void rescale_o(float *o, int no, const float *corr) {
#pragma unroll
  for (int i = 0; i < no / 4; i++) {
    o[4 * i] *= corr[0];
    o[4 * i + 1] *= corr[0];
    o[4 * i + 2] *= corr[1];
    o[4 * i + 3] *= corr[1];
  }
}
// probabilities -> bf16 A fragments of P V, one per 16 keys
__device__ __forceinline__ void to_p(const float *s, uint32_t (*p)[4]) {
#pragma unroll
  for (int kk = 0; kk < BKV / 16; kk++)
#pragma unroll
    for (int j = 0; j < 4; j++)
      p[kk][j] = pack_bf16(s[8 * kk + 2 * j], s[8 * kk + 2 * j + 1]);
}

// a block's unit of work: query tile qt (BQ queries) of head h, sequence b
struct tile_t {
  int qt, h, b;
};
// work item lin in longest-processing-time order: every (head, batch)'s
// longest query tile before any shorter one, heads fastest (so the GQA
// group of a kv head runs side by side); 32-bit (a grid's items fit), so no
// 64-bit division call among the consumers' registers
__device__ __forceinline__ tile_t tile_at(unsigned lin, unsigned nqt,
                                          unsigned heads_q, unsigned nhb) {
  const unsigned r = lin % nhb;
  return {(int)(nqt - 1 - lin / nhb), (int)(r % heads_q), (int)(r / heads_q)};
}

template <int D>
__device__ __forceinline__ void
flash(const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
      const __nv_bfloat16 *__restrict__ v, __nv_bfloat16 *__restrict__ o,
      long batch, long heads_q, long heads_kv, long seqlen,
      unsigned char *smem_raw, const tmap_t *tma_q, const tmap_t *tma_k,
      const tmap_t *tma_v) {
  constexpr int QB = BQ * D * 2;   // the Q region
  constexpr int KVB = BKV * D * 2; // one K or V tile
  // the mbarriers (WS>0) in the first 16*NSLOT + 16 bytes, then the tiles
  // from a 1024-aligned shared address (the 128B swizzle is a function of
  // address bits [4,10)); the launch asks for the slack
  const uint32_t raw = smem_u32(smem_raw);
  unsigned char *sm =
      smem_raw + (((raw + 16 * NSLOT + 16 + 1023) & ~1023u) - raw);
  const uint32_t sb = smem_u32(sm);
  // slot i: K at QB + 2*i*KVB, V at QB + (2*i + 1)*KVB

  // the block's work items: PERSIST > 0: items blockIdx.x, + gridDim.x, ...
  // of the longest-first order (a resident block per SM takes the next
  // item's first K/V tile and Q while its consumers finish the last one's
  // softmax and output); else the one item of its grid position
  const long nqt = (seqlen + BQ - 1) / BQ;
#if PERSIST
  const long lin0 = blockIdx.x, lin_step = gridDim.x,
             lin_end = nqt * heads_q * batch;
#elif LPT
  const long lin0 =
      blockIdx.x +
      (long)gridDim.x * (blockIdx.y + (long)gridDim.y * blockIdx.z);
  const long lin_step = 1, lin_end = lin0 + 1;
#else
  // longest first within a head: item lin decodes to (gridDim.x - 1 -
  // blockIdx.x, blockIdx.y, blockIdx.z)
  const long lin0 =
      blockIdx.x * heads_q * batch + blockIdx.z * heads_q + blockIdx.y;
  const long lin_step = 1, lin_end = lin0 + 1;
#endif
  const long group = heads_q / heads_kv;
  const float sl2 = 1.4426950408889634f / sqrtf((float)D);
  const uint32_t kv4 = (sb + QB) >> 4; // slot i: K at kv4 + 2*i*KVB/16
  const int wg = threadIdx.x >> 7, wt = threadIdx.x & 127;
  (void)tma_q, (void)tma_k, (void)tma_v;

  // WS>0: full[i] at raw + 8i (the producer's 128 threads arrive as their
  // copies land; TMA: one arrival with the tile's bytes), empty[i] at
  // raw + 8(NSLOT + i) (every consumer thread arrives once its wgmmas
  // reading slot i retired); the Q region's own pair: qfull at raw +
  // 16 NSLOT, qempty (every consumer thread, once its output left the
  // region it stages through) at raw + 16 NSLOT + 8. Slot use g counts on
  // across a block's items, so slot g % NSLOT and parity (g / NSLOT) & 1
  // hold in every item.
#if WS
  const uint32_t qfull = raw + 16 * NSLOT, qempty = qfull + 8;
  if (threadIdx.x == 0) {
    for (int i = 0; i < NSLOT; i++) {
      mbar_init(raw + 8 * i, TMA ? 1 : 128);
      mbar_init(raw + 8 * (NSLOT + i), CTHREADS);
    }
    mbar_init(qfull, TMA ? 1 : 128);
    mbar_init(qempty, CTHREADS);
    mbar_fence_init();
  }
  __syncthreads();
  if (threadIdx.x >= CTHREADS) {
    // the producer warpgroup: per item its Q (once the last item's output
    // has left the Q region; TMA: after the item's tile 0, so that tile is
    // on its way during the last item's output) and tile g into slot
    // (base + g) % NSLOT once the tile that used the slot before has been
    // released (a fresh barrier counts its phase of parity 1 as done)
    const int tid = threadIdx.x - CTHREADS;
#if WGS > 1
    reg_dealloc<PRODUCER_REGS>();
#endif
#if TMA
    if (tid == 0) {
      tma_prefetch(tma_q);
      tma_prefetch(tma_k);
      tma_prefetch(tma_v);
    }
#endif
    uint32_t base = 0;
    long n = 0;
    for (long lin = lin0; lin < lin_end; lin += lin_step, n++) {
      const tile_t it = tile_at((unsigned)lin, (unsigned)nqt, (unsigned)heads_q,
                                (unsigned)(heads_q * batch));
      const long hk = it.h / group, q0 = it.qt * BQ;
      const long bend = q0 + BQ < seqlen ? q0 + BQ : seqlen;
      const int nt = (int)((bend + BKV - 1) / BKV);
#if TMA
      // one thread issues every box: per tile g its D/64 K and V boxes
      // into slot (base + g) % NSLOT, Q's D/64 after tile 0
      if (tid == 0) {
        const int qrow = (int)((it.b * heads_q + it.h) * seqlen + q0);
        const long kvrow = (it.b * heads_kv + hk) * seqlen;
        for (int g = 0; g < nt; g++) {
          const uint32_t u = base + g, sl = u % NSLOT;
          const uint32_t full = raw + 8 * sl, st = sb + QB + 2 * sl * KVB;
          while (!mbar_try_wait(raw + 8 * (NSLOT + sl), ((u / NSLOT) & 1) ^ 1))
            ;
          mbar_expect_tx(full, 2 * KVB);
#pragma unroll
          for (int p = 0; p < D / 64; p++) {
            const int r = (int)(kvrow + (long)g * BKV);
            tma_load_2d(st + p * (BKV * 128), tma_k, full, 64 * p, r);
            tma_load_2d(st + KVB + p * (BKV * 128), tma_v, full, 64 * p, r);
          }
          if (g == 0) {
            while (!mbar_try_wait(qempty, ((uint32_t)n & 1) ^ 1))
              ;
            mbar_expect_tx(qfull, QB);
#pragma unroll
            for (int p = 0; p < D / 64; p++)
              tma_load_2d(sb + p * (BQ * 128), tma_q, qfull, 64 * p, qrow);
          }
        }
      }
#else
      const __nv_bfloat16 *qh = q + (it.b * heads_q + it.h) * seqlen * D;
      const __nv_bfloat16 *kh = k + (it.b * heads_kv + hk) * seqlen * D;
      const __nv_bfloat16 *vh = v + (it.b * heads_kv + hk) * seqlen * D;
      // Q first here: after tile 0 (as the TMA thread does) its offsets
      // stay live across that tile's copies and spill (the producer has 40
      // registers)
      while (!mbar_try_wait(qempty, ((uint32_t)n & 1) ^ 1))
        ;
      load_rows<D, BQ, false, 128>(sm, qh, sm, qh, q0, seqlen, tid);
      cp_mbar_arrive(qfull);
      for (int g = 0; g < nt; g++) {
        const uint32_t u = base + g, sl = u % NSLOT;
        while (!mbar_try_wait(raw + 8 * (NSLOT + sl), ((u / NSLOT) & 1) ^ 1))
          ;
        unsigned char *st = sm + QB + 2 * sl * KVB;
        load_rows<D, BKV, true, 128>(st, kh, st + KVB, vh, (long)g * BKV,
                                     seqlen, tid);
        cp_mbar_arrive(raw + 8 * sl);
      }
#endif
      base += nt;
    }
#if !TMA
    cp_wait<0>();
#endif
  } else
#endif
  {
#if WS && WGS > 1
    reg_alloc<CONSUMER_REGS>();
#endif
    const uint32_t qa4 = (sb + wg * 64 * 128) >> 4; // this warpgroup's Q rows
#if WS
    uint32_t base = 0; // slot uses before this item
#endif
    long n = 0;
    for (long lin = lin0; lin < lin_end; lin += lin_step, n++) {
      const tile_t it = tile_at((unsigned)lin, (unsigned)nqt, (unsigned)heads_q,
                                (unsigned)(heads_q * batch));
      const long hk = it.h / group, q0 = it.qt * BQ, qw0 = q0 + 64 * wg;
      const long row0 = qw0 + 16 * (wt >> 5) + ((wt & 31) >> 2);
      // key tiles of the block: up to its last query
      const long bend = q0 + BQ < seqlen ? q0 + BQ : seqlen;
      const int nt = (int)((bend + BKV - 1) / BKV);
      __nv_bfloat16 *oh = o + (it.b * heads_q + it.h) * seqlen * D;
#if WS
      (void)hk;
      // slot of tile t of this item, and the parity of its use
#define SLOT(t) ((base + (uint32_t)(t)) % NSLOT)
#define PARITY(t) (((base + (uint32_t)(t)) / NSLOT) & 1)
#else
      const __nv_bfloat16 *qh = q + (it.b * heads_q + it.h) * seqlen * D;
      const __nv_bfloat16 *kh = k + (it.b * heads_kv + hk) * seqlen * D;
      const __nv_bfloat16 *vh = v + (it.b * heads_kv + hk) * seqlen * D;
#define SLOT(t) ((t) % NSLOT)
      // prologue: Q with tile 0, then tiles 1..NSLOT-2, a cp.async group each
      load_rows<D, BQ, false, THREADS>(sm, qh, sm, qh, q0, seqlen, threadIdx.x);
#pragma unroll
      for (int i = 0; i < NSLOT - 1; i++) {
        if (i < nt)
          load_rows<D, BKV, true, THREADS>(sm + QB + 2 * i * KVB, kh,
                                           sm + QB + (2 * i + 1) * KVB, vh,
                                           (long)i * BKV, seqlen, threadIdx.x);
        cp_commit();
      }
#endif
      float oacc[D / 2], sacc[BKV / 2], corr[2];
      uint32_t pf[BKV / 16][4];
      float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.f, 0.f};
#pragma unroll
      for (int j = 0; j < D / 2; j++)
        oacc[j] = 0.f;
#if WS
      // this item's Q has landed (so every consumer warpgroup is done with
      // the last item: its final pingpong turn was taken)
      while (!mbar_try_wait(qfull, (uint32_t)n & 1))
        ;
#endif
#if PINGPONG
      // the turn starts at warpgroup 0: the last one hands it over (after
      // Q landed: warpgroup 0 has taken the last item's final turn)
      const int ppnext = wg + 1 < WGS ? wg + 1 : 0;
      if (wg == WGS - 1)
        pp_arrive(0);
#define PP_SYNC() pp_sync(wg)
#define PP_ARRIVE() pp_arrive(ppnext)
#else
#define PP_SYNC()
#define PP_ARRIVE()
#endif

#if OVERLAP
        // tile 0's scores before the loop: the loop issues S of tile t+1
        // with P V of tile t
#if WS
      while (!mbar_try_wait(raw + 8 * SLOT(0), PARITY(0)))
        ;
#else
      cp_wait<NSLOT - 2>();
#endif
      fence_async();
#if !WS
      __syncthreads();
#endif
      acc_fence<BKV / 2>(sacc);
      PP_SYNC();
      wg_fence();
      s_gemm<D>(sacc, qa4, kv4 + 2 * SLOT(0) * (KVB / 16));
      wg_commit();
      PP_ARRIVE();
      wg_wait<0>();
      acc_fence<BKV / 2>(sacc);
      softmax_any(sacc, mrow, lrow, corr, 0, qw0, row0, seqlen, sl2);
      to_p(sacc, pf); // O is 0: its rescale (by corr = 0) waits for P V
#endif
      // every warpgroup runs the block's tiles (loop bounds uniform in the
      // block: ptxas serializes wgmmas issued on paths it sees as
      // divergent); keys past a row are masked, and a row that sees none of
      // a tile keeps its max (corr = 1) and adds zeros
#if OVERLAP
      for (int t = 0; t + 1 < nt; t++) {
#else
      for (int t = 0; t < nt; t++) {
#endif
#if WS
        // tile t + OVERLAP has landed
        while (!mbar_try_wait(raw + 8 * SLOT(t + OVERLAP), PARITY(t + OVERLAP)))
          ;
        fence_async();
#else
        // tiles <= t + OVERLAP have landed (STAGES + t - 1 + OVERLAP groups
        // are committed); after the barrier every warpgroup is done with
        // tile t-1, whose slot takes tile t-1+NSLOT (REFILL, issued after
        // this iteration's wgmmas)
        cp_wait<STAGES - 2>();
        fence_async();
        __syncthreads();
#endif
        const uint32_t kt4 = kv4 + 2 * SLOT(t) * (KVB / 16),
                       vt4 = kt4 + KVB / 16;
#if WS
#define REFILL()
#else
#define REFILL()                                                               \
  {                                                                            \
    const int nx = t - 1 + NSLOT;                                              \
    if (nx < nt) {                                                             \
      unsigned char *st = sm + QB + 2 * (nx % NSLOT) * KVB;                    \
      load_rows<D, BKV, true, THREADS>(st, kh, st + KVB, vh, (long)nx * BKV,   \
                                       seqlen, threadIdx.x);                   \
    }                                                                          \
    cp_commit();                                                               \
  }
#endif
#if OVERLAP
        // S of tile t+1, then P V of tile t (two groups); no wgmma on a
        // branch
        acc_fence<BKV / 2>(sacc);
        PP_SYNC();
        wg_fence();
        s_gemm<D>(sacc, qa4, kv4 + 2 * SLOT(t + 1) * (KVB / 16));
        wg_commit();
        acc_fence<BKV / 2>(sacc);
        // O's rescale for tile t's softmax while S of t+1 runs, then P V
        acc_fence<D / 2>(oacc);
        rescale_o(oacc, D / 2, corr);
        acc_fence<D / 2>(oacc);
        reg_fence<BKV / 4>(&pf[0][0]);
        wg_fence();
        pv_gemm<D>(oacc, pf, vt4);
        wg_commit();
        PP_ARRIVE();
        acc_fence<D / 2>(oacc);
        reg_fence<BKV / 4>(&pf[0][0]);
        REFILL();
        wg_wait<1>(); // S of tile t+1 is done; P V of tile t may run on
        acc_fence<BKV / 2>(sacc);
        softmax_any(sacc, mrow, lrow, corr, (long)(t + 1) * BKV, qw0, row0,
                    seqlen, sl2);
        wg_wait<0>();
        acc_fence<D / 2>(oacc);
        reg_fence<BKV / 4>(&pf[0][0]);
#if WS
        mbar_arrive(raw + 8 * (NSLOT + SLOT(t))); // K and V of tile t read
#endif
        to_p(sacc, pf);
#else
        acc_fence<BKV / 2>(sacc);
        PP_SYNC();
        wg_fence();
        s_gemm<D>(sacc, qa4, kt4);
        wg_commit();
        PP_ARRIVE();
        REFILL();
        wg_wait<0>();
        acc_fence<BKV / 2>(sacc);
        softmax_any(sacc, mrow, lrow, corr, (long)t * BKV, qw0, row0, seqlen,
                    sl2);
        rescale_o(oacc, D / 2, corr);
        to_p(sacc, pf);
        acc_fence<D / 2>(oacc);
        reg_fence<BKV / 4>(&pf[0][0]);
        PP_SYNC();
        wg_fence();
        pv_gemm<D>(oacc, pf, vt4);
        wg_commit();
        PP_ARRIVE();
        wg_wait<0>();
        acc_fence<D / 2>(oacc);
#if WS
        mbar_arrive(raw + 8 * (NSLOT + SLOT(t))); // K and V of tile t read
#endif
#endif
#undef REFILL
      }
#if OVERLAP
      // P V of the last tile: it landed (and was fenced) for the S above
      acc_fence<D / 2>(oacc);
      rescale_o(oacc, D / 2, corr);
      acc_fence<D / 2>(oacc);
      reg_fence<BKV / 4>(&pf[0][0]);
      PP_SYNC();
      wg_fence();
      pv_gemm<D>(oacc, pf, kv4 + (2 * SLOT(nt - 1) + 1) * (KVB / 16));
      wg_commit();
      PP_ARRIVE();
      wg_wait<0>();
      acc_fence<D / 2>(oacc);
#if WS
      // its slot is refilled by the next item's tiles
      mbar_arrive(raw + 8 * (NSLOT + SLOT(nt - 1)));
#endif
#endif

#if PINGPONG
      // the last warpgroup's final hand-over to warpgroup 0 is taken, so no
      // named barrier is left half-arrived
      if (wg == 0)
        pp_sync(0);
#endif
#undef PP_SYNC
#undef PP_ARRIVE
#undef SLOT
#undef PARITY
      // O / l into this warpgroup's own Q rows (its S wgmmas have all
      // retired; no other warpgroup reads them), in the same swizzled
      // layout (conflict-free: the 8 rows a store touches sit in 8
      // different 16-byte columns)
      const int qd = wt & 3;
#pragma unroll
      for (int hh = 0; hh < 2; hh++) {
        float lt = lrow[hh];
        lt += __shfl_xor_sync(0xffffffffu, lt, 1);
        lt += __shfl_xor_sync(0xffffffffu, lt, 2);
        const float inv = lt > 0.f ? 1.f / lt : 0.f;
        const int r = 64 * wg + 16 * (wt >> 5) + ((wt & 31) >> 2) + 8 * hh;
#pragma unroll
        for (int i = 0; i < D / 8; i++) {
          const int c = 8 * i + 2 * qd;
          *(__nv_bfloat162 *)(sm + (c >> 6) * (BQ * 128) + r * 128 +
                              ((((c & 63) >> 3) ^ (r & 7)) << 4) +
                              (c & 7) * 2) =
              __floats2bfloat162_rn(oacc[4 * i + 2 * hh] * inv,
                                    oacc[4 * i + 2 * hh + 1] * inv);
        }
      }
      // then the warpgroup's 64 rows out in 16-byte chunks (a barrier of
      // its 128 threads only: the producer may be gone)
      wg_bar(wg);
      constexpr int CPR = D / 8;
#pragma unroll
      for (int i = 0; i < 64 * CPR / 128; i++) {
        const int c = wt + i * 128;
        const int r = 64 * wg + c / CPR, j = c % CPR;
        if (q0 + r < seqlen)
          *(uint4 *)(oh + (q0 + r) * D + j * 8) =
              *(const uint4 *)(sm + (j >> 3) * (BQ * 128) + r * 128 +
                               (((j & 7) ^ (r & 7)) << 4));
      }
#if WS
      // the region may take the next item's Q: this thread's reads and
      // writes of it (generic proxy) are ordered before the copies that
      // overwrite it (async proxy)
      fence_async();
      mbar_arrive(qempty);
      base += nt;
#endif
      (void)n;
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) attention_prefill(
    const __nv_bfloat16 *__restrict__ q, const __nv_bfloat16 *__restrict__ k,
    const __nv_bfloat16 *__restrict__ v, __nv_bfloat16 *__restrict__ o,
    long batch, long heads_q, long heads_kv, long seqlen, long head_dim,
    const __grid_constant__ tmap_t tma_q, const __grid_constant__ tmap_t tma_k,
    const __grid_constant__ tmap_t tma_v) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  if (head_dim == 128)
    flash<128>(q, k, v, o, batch, heads_q, heads_kv, seqlen, smem_raw, &tma_q,
               &tma_k, &tma_v);
  else if (head_dim == 64)
    flash<64>(q, k, v, o, batch, heads_q, heads_kv, seqlen, smem_raw, &tma_q,
              &tma_k, &tma_v);
  else
    __trap(); // no instance for this head_dim: a launch error, never a wrong
              // answer
}
