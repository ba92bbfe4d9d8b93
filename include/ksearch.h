/* ksearch.h — the public C API of ksearch: errors, tasks, evaluation.
 *
 * ksearch searches for fast compute kernels (see docs/DESIGN.md). This header
 * is what the command line, the tests and any embedding program use. Every
 * fallible call returns a ks_code and fills a ks_err with a readable message
 * that names the file, the field and the fix; nothing here calls exit().
 */
#ifndef KSEARCH_H
#define KSEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- errors */

/* One error-code space for the whole program (curl style). The first four
 * map one-to-one onto the process exit codes of DESIGN.md. */
typedef enum ks_code {
  KS_OK = 0,
  KS_ERR_CANDIDATE = 1,     /* the candidate was evaluated and failed */
  KS_ERR_INPUT = 2,         /* bad input or usage */
  KS_ERR_ENV = 3,           /* environment: missing tool, backend unavailable */
  KS_ERR_UNIMPLEMENTED = 4, /* a path that does not exist yet (exits 3) */
  KS_ERR_IO = 5,            /* file system or pipe failure */
  KS_ERR_NOMEM = 6,         /* out of memory in ksearch itself */
  KS_ERR_INTERNAL = 7       /* a bug in ksearch */
} ks_code;

typedef struct ks_err {
  ks_code code;
  char msg[2048];
} ks_err;

/* Sets err (if not NULL) and returns code, so `return ks_err_set(...)`. */
ks_code ks_err_set(ks_err *err, ks_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends context ("while reading X: ") to an existing message. */
ks_code ks_err_prefix(ks_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *ks_code_name(ks_code code);
/* Process exit code for an error code: 0, 1, 2 or 3. */
int ks_exit_code(ks_code code);

/* ---------------------------------------------------------------- dtypes */

typedef enum ks_dtype {
  KS_F32,
  KS_F16,  /* IEEE half, passed to kernels as uint16_t bit patterns */
  KS_BF16, /* bfloat16, passed to kernels as uint16_t bit patterns */
  KS_I32,
  KS_I64,
  KS_U8,
  KS_DTYPE_COUNT
} ks_dtype;

const char *ks_dtype_name(ks_dtype t);
size_t ks_dtype_size(ks_dtype t);
/* The C type a kernel sees: "float", "uint16_t", "int32_t", ... */
const char *ks_dtype_ctype(ks_dtype t);
bool ks_dtype_parse(const char *name, ks_dtype *out);
bool ks_dtype_is_float(ks_dtype t);
double ks_dtype_load(ks_dtype t, const void *base, size_t i);
void ks_dtype_store(ks_dtype t, void *base, size_t i, double v);

/* ---------------------------------------------------------------- tasks */

#define KS_MAX_AXES 16
#define KS_MAX_TENSORS 16
#define KS_MAX_SCALARS 16
#define KS_MAX_RANK 8
#define KS_MAX_WORKLOADS 64

typedef struct ks_expr ks_expr; /* parsed arithmetic expression, see expr.h */

typedef struct ks_axis {
  char name[64];
  bool is_const;   /* const or derived: filled in, never passed to kernels */
  int64_t value;   /* const axes only */
  ks_expr *derive; /* derived axes only: expression over the var/const axes */
  char derive_src[128]; /* its text, for messages and prompts */
} ks_axis;

typedef enum ks_init_kind {
  KS_INIT_NORMAL,
  KS_INIT_UNIFORM,
  KS_INIT_RANDINT,
  KS_INIT_POSITIVE,
  KS_INIT_PERMUTATION,
  KS_INIT_ZEROS, /* outputs only; never used for inputs by the built-ins */
} ks_init_kind;

typedef struct ks_init {
  ks_init_kind kind;
  double a, b; /* uniform(a,b), randint(a,b) inclusive, normal(mean=a,std=b) */
  /* randint bounds written as axis expressions ("randint(1, max_pages*16)"):
   * evaluated per workload, replacing a/b; NULL for numeric bounds */
  ks_expr *a_expr, *b_expr;
} ks_init;

typedef struct ks_tensor {
  char name[64];
  ks_dtype dtype;
  int rank;
  int dims[KS_MAX_RANK]; /* index into ks_task.axes */
  ks_init init;          /* inputs only */
} ks_tensor;

typedef struct ks_scalar {
  char name[64];
  ks_dtype dtype; /* float32, int32 or int64 */
  double value;
} ks_scalar;

typedef struct ks_tolerance {
  double atol, rtol;
} ks_tolerance;

/* Where a workload runs (task.json workload key "device"): CI's CPU runs
 * never touch GPU-sized workloads. */
typedef enum ks_device_class {
  KS_DEV_ANY = 0, /* no "device" key: every backend */
  KS_DEV_CPU = 1,
  KS_DEV_GPU = 2,
} ks_device_class;

typedef struct ks_workload {
  int64_t axis[KS_MAX_AXES]; /* every axis, const ones filled in */
  ks_device_class device;    /* "device": "cpu" | "gpu"; absent: any */
} ks_workload;

/* Whether workload w runs on a backend of device class dc. */
bool ks_workload_applies(const ks_workload *w, ks_device_class dc);

typedef struct ks_expr ks_expr; /* parsed arithmetic expression, see expr.h */

typedef struct ks_task {
  char name[64];
  char klass[64]; /* "class" in task.json */
  char description[512];
  char dir[1024];       /* folder holding task.json */
  char json_path[1100]; /* task.json itself, for messages */
  char reference_path[1200];
  int n_axes, n_inputs, n_outputs, n_scalars, n_workloads;
  ks_axis axes[KS_MAX_AXES];
  ks_tensor inputs[KS_MAX_TENSORS];
  ks_tensor outputs[KS_MAX_TENSORS];
  ks_scalar scalars[KS_MAX_SCALARS];
  ks_tolerance tol[KS_DTYPE_COUNT];
  bool tol_set[KS_DTYPE_COUNT];
  ks_expr *cost_bytes; /* may be NULL */
  ks_expr *cost_flops; /* may be NULL */
  char cost_bytes_src[256], cost_flops_src[256];
  ks_workload workloads[KS_MAX_WORKLOADS];
  uint64_t hash; /* of task.json and reference.c contents */
} ks_task;

/* Loads and validates a task from a folder (or a task.json path, or the name
 * of a built-in task). Messages name the file, the JSON path and the fix. */
ks_code ks_task_load(const char *where, ks_task *task, ks_err *err);
/* Loads from JSON text; `path` is used for messages and relative files. */
ks_code ks_task_load_json(const char *text, const char *path, ks_task *task,
                          ks_err *err);
void ks_task_free(ks_task *task);
/* Keeps only the workloads SPEC names (`--workloads`: indices or
 * AXIS=V[+AXIS=V], comma-separated; task_select.c). */
ks_code ks_task_select_workloads(ks_task *task, const char *spec, ks_err *err);
int ks_task_axis_index(const ks_task *task, const char *name);
/* Number of elements of a tensor for a workload. */
/* The init of an input at workload w: randint bounds written over the axes
 * evaluated (LO rounded up, HI down); other inits unchanged. */
ks_init ks_init_bounds(const ks_task *task, const ks_init *in,
                       const ks_workload *w);
int64_t ks_tensor_numel(const ks_task *task, const ks_tensor *t,
                        const ks_workload *w);
/* Bytes and FLOPs of one call from the cost model (0 when absent). */
double ks_task_cost_bytes(const ks_task *task, const ks_workload *w);
double ks_task_cost_flops(const ks_task *task, const ks_workload *w);
/* "rows=4096 cols=4096" (var axes only). */
void ks_workload_format(const ks_task *task, const ks_workload *w, char *buf,
                        size_t n);
/* Tolerance of a dtype: the task's own, else the defaults. */
ks_tolerance ks_task_tolerance(const ks_task *task, ks_dtype t);

/* Folder of built-in tasks (KSEARCH_TASKS_DIR, else next to the binary). */
const char *ks_builtin_tasks_dir(void);
/* Folder holding the ksearch source tree / data (specs, tasks). */
const char *ks_data_dir(void);

#ifdef __cplusplus
}
#endif
#endif
