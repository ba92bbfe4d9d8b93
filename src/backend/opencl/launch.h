/* launch.h — launch geometry of GPU-style candidates (DESIGN.md: Candidate
 * file, `launch`): which kernels run, in which order, over which grid.
 * Shared by the OpenCL and CUDA backends.
 *
 *   // ksearch: launch [kernel=NAME] global=(E[,E[,E]]) local=(E[,E[,E]])
 *                      [scratch=(E)] [when=(E)]             (OpenCL)
 *   // ksearch: launch [kernel=NAME] grid=(E[,E[,E]]) block=(E[,E[,E]])
 *                      [smem=(E)] [scratch=(E)] [when=(E)]
 *                      [pdl=(E)]                             (CUDA)
 *
 * grid counts blocks (CUDA convention), block threads per block, smem the
 * dynamic shared memory in bytes; ks_launch_eval turns a grid line into the
 * same geometry (global = grid * block) so both backends share it.
 *
 * One line per kernel launch, run in file order on one in-order queue; a
 * line without kernel= launches the entry point. E are expressions
 * (task/expr.h) over the task's axes (var and const) and the candidate's
 * parameters. global and local count work-items per dimension (OpenCL
 * convention) and need the same number of dimensions (1..3); each global
 * size is rounded up to a multiple of its local size, so kernels must
 * bounds-check. scratch=(E) asks for one device scratch buffer of E bytes
 * (the largest over all lines), shared by the sequence and appended as the
 * last argument of every kernel. when=(E): the line is launched only where
 * E is not 0 (a parameter that fuses a pass into an earlier kernel drops
 * its launch: ks_launch_geom.skip). pdl=(E) (CUDA, grid lines only): where
 * E is not 0 the kernel is launched with programmatic dependent launch
 * (sm_90+): its blocks may start while the kernel launched before it in the
 * same call still runs, so it must wait (griddepcontrol.wait) before it
 * reads what that kernel writes; the first kernel a call launches never
 * overlaps (nothing of the judge's, the L2 flush or the clock's start,
 * runs beside a candidate). Pure parsing and arithmetic: no OpenCL
 * here, so the parent, the runner and the unit tests share it.
 */
#ifndef KS_LAUNCH_H
#define KS_LAUNCH_H

#include "eval/candidate.h"
#include "ksearch.h"

#define KS_LAUNCH_MAX 8 /* kernel launches per call */

typedef struct ks_launch {
  char kernel[64];
  int dims; /* 1..3 */
  ks_expr *global[3], *local[3];
  ks_expr *scratch; /* NULL when the line has no scratch= */
  ks_expr *smem;    /* dynamic shared memory bytes (grid lines); or NULL */
  ks_expr *when;    /* when=(E): launched only where E != 0; or NULL */
  ks_expr *pdl;     /* pdl=(E): programmatic dependent launch; or NULL */
  bool grid_style;  /* grid=/block= (CUDA) rather than global=/local= */
  int line;         /* 1-based line in the source, for messages */
} ks_launch;

typedef struct ks_launch_plan {
  int n;
  ks_launch k[KS_LAUNCH_MAX];
} ks_launch_plan;

/* Evaluated geometry of one launch for one workload. */
typedef struct ks_launch_geom {
  int dims;
  size_t global[3], local[3]; /* global already rounded up to local */
  size_t smem;                /* dynamic shared memory bytes (CUDA) */
  bool skip; /* when= is 0 for this workload and parameters: not launched */
  bool pdl;  /* pdl= is not 0: may overlap the kernel launched before it */
} ks_launch_geom;

/* Parses the text after `launch` of one header line into *out. */
/* The depth-0 comma-separated parts of "a, max(b,c), d" parsed as
 * expressions into out (at most max). Returns the count; -1 when a part is
 * empty or longer than 255 bytes or there are more than max (err untouched);
 * -2 when a part is no expression (err says why). Nothing is kept on
 * failure. */
int ks_header_parse_exprs(const char *s, int max, ks_expr **out, ks_err *err);
/* One KEY=VALUE of a header line (launch, tensormap) at *p, spaces before
 * it skipped: VALUE runs to the matching parenthesis when it opens one
 * (spaces allowed inside; *paren, when not NULL, says so), else it is a
 * bare token. *done: nothing was left. Errors name the line, `what` line
 * it is and the `expected` syntax. */
ks_code ks_header_next_kv(const char **p, int line, const char *what,
                          const char *expected, char *key, size_t kn, char *val,
                          size_t vn, bool *paren, bool *done, ks_err *err);
ks_code ks_launch_parse_line(const char *text, const char *default_kernel,
                             int line, ks_launch *out, ks_err *err);
/* Every `// ksearch: launch` line of a candidate source, in order. No launch
 * line is an error that says what to add. Errors name path and line. */
ks_code ks_launch_parse(const char *source, const char *path,
                        const char *default_kernel, ks_launch_plan *out,
                        ks_err *err);
/* The raw text of every launch line (after `launch `), in order; returns the
 * count, at most max. */
int ks_launch_lines(const char *source, char lines[][512], int max);
/* The raw text (after `KEYWORD `) of every `// ksearch: KEYWORD` line, in
 * order, and its 1-based line number when linenos is not NULL; returns the
 * count, at most max. (`tensormap` lines, backend/cuda/tensormap.h, use it.) */
int ks_header_lines(const char *source, const char *keyword, char lines[][512],
                    int *linenos, int max);
/* One header expression (task/expr.h) with names bound as in
 * ks_launch_eval: the task's axes, then the parameters (numbers). */
ks_code ks_launch_eval_expr(const ks_expr *e, const ks_task *task,
                            const ks_workload *w, const ks_param_value *params,
                            int n_params, double *out, ks_err *err);
/* Geometry of every launch of the plan for one workload, with names bound to
 * the task's axes and the parameter values (which must be numbers when a
 * launch expression uses them), and the scratch bytes (0 if none). A size
 * that is not a positive finite number below 2^40 is an error naming the
 * launch, the dimension and the workload. */
ks_code ks_launch_eval(const ks_launch_plan *p, const ks_task *task,
                       const ks_workload *w, const ks_param_value *params,
                       int n_params, ks_launch_geom *out, double *scratch_bytes,
                       ks_err *err);
/* Every line of the plan in the style its backend reads: grid= lines for
 * CUDA (want_grid), global= lines for OpenCL. The error says which keys to
 * use and names path and line. */
ks_code ks_launch_check_style(const ks_launch_plan *p, bool want_grid,
                              const char *path, ks_err *err);
/* The names launch expressions may use besides the axes: the parameters
 * set on the candidate, then numeric `#define NAME V` lines of the source
 * not already set (a run's best/ file has its parameters baked in that
 * way; a -D of the same name wins, as in the compiler's #ifndef). Returns
 * the count (at most max). */
int ks_launch_names(const ks_candidate *cand, ks_param_value *names, int max);
/* "256-1-1": the local size as PoCL names its work-group specializations. */
void ks_launch_local_key(const ks_launch_geom *g, char *buf, size_t n);
void ks_launch_free(ks_launch_plan *p);

#endif
