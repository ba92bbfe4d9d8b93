/* tensormap.h — TMA tensor maps of CUDA candidates (DESIGN.md: Candidate
 * file, `tensormap`; Backend interface, cuda):
 *
 *   // ksearch: tensormap NAME of=BUFFER box=(E0[, E1...]) [swizzle=S]
 *                         [view=(D0[, D1...])]
 *
 * asks the executor for a CUtensorMap (cuTensorMapEncodeTiled) over the
 * task's tensor BUFFER (an input or an output), passed to the kernels as
 * `const __grid_constant__ CUtensorMap NAME` after every other argument, in
 * header-line order. Sizes are innermost first, as the driver takes them
 * (the reverse of task.json's shape): without view= the map has the
 * buffer's own dimensions, [m, k] giving (k, m); view= regroups the packed
 * buffer into 1..5 dimensions whose product is its element count (q
 * [b,h,s,d] as (d, b*h*s)). Address, strides, data type and extent come
 * from the task, never from the candidate: a map addresses exactly the
 * buffer's bytes (not its guards). box= is the tile one copy moves (1..256
 * elements per dimension, the innermost a multiple of 16 bytes and, with a
 * swizzle, at most the swizzle's span); swizzle= is 0 (default), 32, 64 or
 * 128 bytes; interleave none, out-of-bounds elements read as zeros, L2
 * promotion 256 B. E and D are expressions (task/expr.h) over the task's
 * axes and the candidate's parameters, checked for every GPU workload at
 * build time: a bad line is the candidate's compile_error naming the line
 * and the fix. A workload whose packed strides are not multiples of 16
 * bytes (a [m, k] bf16 buffer with k % 8 != 0) cannot be addressed by the
 * TMA: its map is passed as 128 zero bytes (`encodable` false), and the
 * kernel must take another path for such shapes (it has the axes).
 *
 * Pure parsing and arithmetic, no CUDA: the parent, the runner and the
 * unit tests share it. */
#ifndef KS_TENSORMAP_H
#define KS_TENSORMAP_H

#include "eval/candidate.h"
#include "ksearch.h"

#include <stdint.h>

#define KS_TMAP_MAX 8  /* tensor maps per candidate */
#define KS_TMAP_RANK 5 /* cuTensorMapEncodeTiled's most dimensions */

typedef struct ks_tmap {
  char name[64];
  char of[64];
  int tensor;  /* inputs then outputs: 0 .. n_inputs + n_outputs - 1 */
  int rank;    /* box dimensions = map dimensions */
  int n_view;  /* 0: the buffer's own shape, innermost first */
  int swizzle; /* bytes: 0, 32, 64, 128 */
  ks_expr *box[KS_TMAP_RANK], *view[KS_TMAP_RANK];
  int line; /* 1-based line in the source, for messages */
} ks_tmap;

typedef struct ks_tmap_set {
  int n;
  ks_tmap m[KS_TMAP_MAX];
} ks_tmap_set;

/* One map evaluated for one workload: what cuTensorMapEncodeTiled takes
 * (besides the buffer's address). */
typedef struct ks_tmap_geom {
  int rank;
  int dtype;      /* CUtensorMapDataType */
  int swizzle;    /* CUtensorMapSwizzle */
  int elem_bytes; /* of the buffer's dtype */
  uint64_t dim[KS_TMAP_RANK];
  uint64_t stride[KS_TMAP_RANK - 1]; /* bytes, of dims 1..rank-1 */
  uint32_t box[KS_TMAP_RANK];
  uint64_t bytes; /* the buffer's bytes: the map covers exactly these */
  bool encodable; /* false: a stride is not a multiple of 16 (zero map) */
} ks_tmap_geom;

/* Parses the text after `tensormap` of one header line against the task
 * (BUFFER must be one of its tensors). Errors name the line and the fix. */
ks_code ks_tmap_parse_line(const char *text, const ks_task *task, int line,
                           ks_tmap *out, ks_err *err);
/* Every `// ksearch: tensormap` line of a source, in order (none is fine);
 * names must differ. Errors are prefixed with path. */
ks_code ks_tmap_parse(const char *source, const char *path, const ks_task *task,
                      ks_tmap_set *out, ks_err *err);
/* Evaluates every map for one workload and checks the driver's rules
 * (cuTensorMapEncodeTiled, CUDA 12/13 driver API): view product equals the
 * element count, each dimension 1..2^32, each box 1..256, innermost box
 * bytes a multiple of 16 and within the swizzle span. */
ks_code ks_tmap_eval(const ks_tmap_set *s, const ks_task *task,
                     const ks_workload *w, const ks_param_value *params,
                     int n_params, ks_tmap_geom *out, ks_err *err);
void ks_tmap_free(ks_tmap_set *s);

#endif
