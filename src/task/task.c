/* task.c — reading and validating task.json (DESIGN.md: Task).
 *
 * Every problem is reported as "<file>: <json path>: <what is wrong>; <fix>",
 * so that a task author never has to guess. Validation happens here, once;
 * the rest of ksearch trusts a loaded ks_task. Finding a task by folder,
 * file or built-in name: task_find.c; what a loaded task answers (costs,
 * tolerances, workload text): task_query.c.
 */
#include "task/expr.h"
#include "util/util.h"

#include <ctype.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BAD(...) ks_err_set(err, KS_ERR_INPUT, __VA_ARGS__)

/* The finite values a dtype holds: bounds of init draws and scalars. */
static void dtype_range(ks_dtype dt, double *lo, double *hi) {
  switch (dt) {
  case KS_F32: *hi = FLT_MAX; break;
  case KS_F16: *hi = 65504; break;
  case KS_BF16: *hi = 3.3895313892515355e38; break;
  case KS_I32:
    *lo = INT32_MIN;
    *hi = INT32_MAX;
    return;
  case KS_I64: /* doubles near 2^63 round to it, which int64 lacks */
    *lo = -9223372036854775808.0;
    *hi = 9223372036854774784.0;
    return;
  case KS_U8:
    *lo = 0;
    *hi = 255;
    return;
  default: *hi = FLT_MAX; break;
  }
  *lo = -*hi;
}

static void axis_names(const ks_task *t, const char **names) {
  for (int i = 0; i < t->n_axes; i++)
    names[i] = t->axes[i].name;
}

/* "randint(LO, HI)" with LO or HI an expression over the axes: both parsed
 * into out->a_expr / b_expr (evaluated per workload by ks_init_bounds). */
static ks_code parse_randint_exprs(const ks_task *t, const char *file,
                                   const char *path, const char *s,
                                   ks_init *out, ks_err *err) {
  size_t n = strlen(s);
  if (strncmp(s, "randint(", 8) || n < 10 || s[n - 1] != ')')
    return BAD("%s: %s: \"%s\" is not randint(LO, HI); write the bounds as "
               "numbers or axis expressions in one pair of parentheses",
               file, path, s);
  char buf[256];
  if (n - 9 >= sizeof buf)
    return BAD("%s: %s: init longer than %zu characters", file, path,
               sizeof buf - 1);
  memcpy(buf, s + 8, n - 9);
  buf[n - 9] = 0;
  int depth = 0;
  char *comma = NULL;
  for (char *c = buf; *c; c++) {
    depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
    if (*c == ',' && depth == 0) {
      if (comma)
        return BAD("%s: %s: \"%s\" has more than two bounds; write "
                   "randint(LO, HI)",
                   file, path, s);
      comma = c;
    }
  }
  if (!comma)
    return BAD("%s: %s: \"%s\" needs two bounds; write randint(LO, HI)", file,
               path, s);
  *comma = 0;
  const char *names[KS_MAX_AXES];
  axis_names(t, names);
  out->kind = KS_INIT_RANDINT;
  if (ks_expr_parse(buf, names, t->n_axes, &out->a_expr, err) ||
      ks_expr_parse(comma + 1, names, t->n_axes, &out->b_expr, err)) {
    ks_expr_free(out->a_expr);
    out->a_expr = NULL;
    ks_err_prefix(err, "%s: %s: ", file, path);
    if (err)
      snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg),
               "; randint bounds are numbers or arithmetic over the axes, "
               "e.g. randint(1, max_pages*page_size)");
    return KS_ERR_INPUT;
  }
  return KS_OK;
}

static ks_code parse_init(const ks_task *t, const char *file, const char *path,
                          const char *s, ks_dtype dt, ks_init *out,
                          ks_err *err) {
  memset(out, 0, sizeof *out);
  double a = 0, b = 0;
  int end = -1;
#define TWO(fmt)                                                               \
  (end = -1, sscanf(s, fmt " %n", &a, &b, &end) == 2 && end > 0 && !s[end])
  if (!strcmp(s, "normal")) {
    out->kind = KS_INIT_NORMAL;
    out->a = 0;
    out->b = 1;
  } else if (TWO("normal( %lf , %lf )")) {
    out->kind = KS_INIT_NORMAL;
    out->a = a;
    out->b = b;
  } else if (TWO("uniform( %lf , %lf )")) {
    out->kind = KS_INIT_UNIFORM;
    out->a = a;
    out->b = b;
  } else if (TWO("randint( %lf , %lf )")) {
    out->kind = KS_INIT_RANDINT;
    out->a = a;
    out->b = b;
  } else if (!strcmp(s, "positive")) {
#undef TWO
    out->kind = KS_INIT_POSITIVE;
  } else if (!strcmp(s, "permutation")) {
    out->kind = KS_INIT_PERMUTATION;
  } else if (!strncmp(s, "randint(", 8)) {
    /* bounds over the axes; checked per workload once workloads are read */
    return parse_randint_exprs(t, file, path, s, out, err);
  } else {
    return BAD("%s: %s: unknown init \"%s\"; use one of normal, "
               "normal(mean,std), uniform(a,b), randint(a,b), positive, "
               "permutation",
               file, path, s);
  }
  double lo, hi;
  dtype_range(dt, &lo, &hi);
  if (out->kind == KS_INIT_NORMAL || out->kind == KS_INIT_UNIFORM ||
      out->kind == KS_INIT_RANDINT) {
    if (!(out->a >= lo && out->a <= hi && out->b >= lo && out->b <= hi))
      return BAD("%s: %s: \"%s\" has a bound outside what %s holds (%g to "
                 "%g); use bounds within that range",
                 file, path, s, ks_dtype_name(dt), lo, hi);
    if (out->kind == KS_INIT_RANDINT &&
        (out->a != floor(out->a) || out->b != floor(out->b)))
      return BAD("%s: %s: \"%s\" needs whole-number bounds", file, path, s);
  }
  if ((out->kind == KS_INIT_UNIFORM || out->kind == KS_INIT_RANDINT) &&
      !(a <= b))
    return BAD("%s: %s: \"%s\" has a > b; write the smaller bound first", file,
               path, s);
  if (out->kind == KS_INIT_NORMAL && !(out->b > 0))
    return BAD("%s: %s: \"%s\" needs a positive standard deviation", file, path,
               s);
  return KS_OK;
}

/* "missing" only when the field is absent: a present field of the wrong type
 * says so, so the author does not hunt for a field that is there. */
static const char *what_wrong(const json_t *v, const char *want, char *buf,
                              size_t n) {
  if (!v)
    return "missing";
  const char *got = json_is_object(v)    ? "an object"
                    : json_is_array(v)   ? "a list"
                    : json_is_string(v)  ? "a string"
                    : json_is_number(v)  ? "a number"
                    : json_is_boolean(v) ? "a boolean"
                                         : "null";
  snprintf(buf, n, "must be %s, not %s", want, got);
  return buf;
}
/* the message buffer lives in the caller's block (a compound literal) */
#define WHAT_WRONG(v, want) what_wrong(v, want, (char[80]){0}, 80)

static ks_code parse_tensors(const char *file, ks_task *t, json_t *obj,
                             const char *key, bool is_input, ks_err *err) {
  if (!json_is_object(obj) || json_object_size(obj) == 0)
    return BAD("%s: %s: missing or empty; give an object of tensors, e.g. "
               "{\"x\": {\"shape\": [\"rows\"], \"dtype\": \"float32\"}}",
               file, key);
  ks_tensor *arr = is_input ? t->inputs : t->outputs;
  int *count = is_input ? &t->n_inputs : &t->n_outputs;
  const char *name;
  json_t *v;
  json_object_foreach(obj, name, v) {
    if (*count >= KS_MAX_TENSORS)
      return BAD("%s: %s: more than %d tensors", file, key, KS_MAX_TENSORS);
    ks_tensor *ts = &arr[(*count)++];
    memset(ts, 0, sizeof *ts);
    if (!ks_is_c_name(name) || strlen(name) >= sizeof ts->name)
      return BAD("%s: %s.%s: tensor names must be C identifiers and no C "
                 "keyword",
                 file, key, name);
    ks_strlcpy(ts->name, name, sizeof ts->name);
    if (!json_is_object(v))
      return BAD("%s: %s.%s: must be an object with shape and dtype", file, key,
                 name);
    json_t *shape = json_object_get(v, "shape");
    if (!json_is_array(shape))
      return BAD("%s: %s.%s.shape: %s; give a list of axis names, e.g. "
                 "[\"rows\", \"cols\"]",
                 file, key, name, WHAT_WRONG(shape, "a list"));
    if (json_array_size(shape) > KS_MAX_RANK)
      return BAD("%s: %s.%s.shape: rank above %d", file, key, name,
                 KS_MAX_RANK);
    size_t i;
    json_t *d;
    json_array_foreach(shape, i, d) {
      if (!json_is_string(d))
        return BAD("%s: %s.%s.shape[%zu]: must be an axis name (a string)",
                   file, key, name, i);
      int ax = ks_task_axis_index(t, json_string_value(d));
      if (ax < 0)
        return BAD("%s: %s.%s.shape[%zu]: unknown axis \"%s\"; declare it "
                   "under \"axes\" or fix the name",
                   file, key, name, i, json_string_value(d));
      ts->dims[ts->rank++] = ax;
    }
    json_t *dt = json_object_get(v, "dtype");
    if (!json_is_string(dt) ||
        !ks_dtype_parse(json_string_value(dt), &ts->dtype))
      return BAD("%s: %s.%s.dtype: %s%s%s; use one of float32, float16, "
                 "bfloat16, int32, int64, uint8",
                 file, key, name,
                 json_is_string(dt) ? "unsupported dtype \""
                                    : WHAT_WRONG(dt, "a string"),
                 json_is_string(dt) ? json_string_value(dt) : "",
                 json_is_string(dt) ? "\"" : "");
    if (is_input) {
      json_t *in = json_object_get(v, "init");
      const char *s = json_is_string(in) ? json_string_value(in) : "normal";
      if (in && !json_is_string(in))
        return BAD("%s: %s.%s.init: must be a string like \"normal\"", file,
                   key, name);
      char path[256];
      snprintf(path, sizeof path, "%s.%s.init", key, name);
      if (parse_init(t, file, path, s, ts->dtype, &ts->init, err))
        return KS_ERR_INPUT;
      if (!ks_dtype_is_float(ts->dtype) &&
          (ts->init.kind == KS_INIT_NORMAL || ts->init.kind == KS_INIT_UNIFORM))
        return BAD("%s: %s: integer tensor with a real-valued init; use "
                   "randint(a,b) or permutation",
                   file, path);
    }
  }
  return KS_OK;
}

int ks_task_axis_index(const ks_task *task, const char *name) {
  for (int i = 0; i < task->n_axes; i++)
    if (!strcmp(task->axes[i].name, name))
      return i;
  return -1;
}

static ks_code parse_cost(const char *file, ks_task *t, json_t *cost,
                          const char *key, ks_expr **out, char *src,
                          size_t srcn, ks_err *err) {
  json_t *v = json_object_get(cost, key);
  if (!v)
    return KS_OK;
  if (!json_is_string(v))
    return BAD("%s: cost.%s: must be a string expression over axes, e.g. "
               "\"4*rows*cols\"",
               file, key);
  const char *names[KS_MAX_AXES];
  for (int i = 0; i < t->n_axes; i++)
    names[i] = t->axes[i].name;
  ks_strlcpy(src, json_string_value(v), srcn);
  if (ks_expr_parse(json_string_value(v), names, t->n_axes, out, err)) {
    ks_err_prefix(err, "%s: cost.%s: ", file, key);
    if (err) /* the parser says what is wrong; say how to write it */
      snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg),
               "; write arithmetic over the axes with + - * / %% ^ ( ) and "
               "min, max, cdiv, ceil, floor, sqrt, log2, e.g. \"4*rows*cols\"");
    return KS_ERR_INPUT;
  }
  return KS_OK;
}

/* The roofline fraction and the judge's plausibility checks divide by these
 * numbers: one that is not finite and positive (1/0, log2(0), rows-cols) is
 * the task's mistake, named here rather than read later as "no cost". */
static ks_code check_cost(const char *file, const ks_task *t, const ks_expr *e,
                          const char *key, size_t wi, ks_err *err) {
  if (!e)
    return KS_OK;
  const ks_workload *w = &t->workloads[wi];
  double vals[KS_MAX_AXES];
  for (int i = 0; i < t->n_axes; i++)
    vals[i] = (double)w->axis[i];
  double v = ks_expr_eval(e, vals);
  if (isfinite(v) && v > 0)
    return KS_OK;
  char axes[256];
  ks_workload_format(t, w, axes, sizeof axes);
  return BAD("%s: cost.%s: \"%s\" is %g on workloads[%zu] (%s); a cost must "
             "be finite and positive on every workload (leave the field out "
             "when it is unknown)",
             file, key, key[0] == 'b' ? t->cost_bytes_src : t->cost_flops_src,
             v, wi, axes);
}

static double phys_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  return pages > 0 && psz > 0 ? (double)pages * (double)psz : 8e9;
}

ks_code ks_task_load_json(const char *text, const char *path, ks_task *t,
                          ks_err *err) {
  memset(t, 0, sizeof *t);
  ks_strlcpy(t->json_path, path, sizeof t->json_path);
  ks_strlcpy(t->dir, path, sizeof t->dir);
  char *slash = strrchr(t->dir, '/');
  if (slash)
    *slash = 0;
  else
    strcpy(t->dir, ".");
  const char *file = path;
  json_error_t je;
  json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
  if (!root)
    return BAD("%s: line %d column %d: invalid JSON: %s; fix the JSON there "
               "(each key once, strings in double quotes, no trailing "
               "commas)",
               file, je.line, je.column, je.text);
  ks_code rc = KS_ERR_INPUT;
  json_t *v;
#define FAIL(...)                                                              \
  do {                                                                         \
    BAD(__VA_ARGS__);                                                          \
    goto out;                                                                  \
  } while (0)
  if (!json_is_object(root))
    FAIL("%s: the top level must be a JSON object", file);

  v = json_object_get(root, "name");
  if (!json_is_string(v))
    FAIL("%s: name: %s; the task name is also the kernel's entry point, e.g. "
         "\"rmsnorm\"",
         file, WHAT_WRONG(v, "a string"));
  if (!ks_is_c_name(json_string_value(v)) ||
      strlen(json_string_value(v)) >= sizeof t->name)
    FAIL("%s: name: \"%.64s\" is not a C identifier (or is a C keyword, or "
         "longer than %zu); the task name is also the kernel's entry point, "
         "e.g. \"rmsnorm\"",
         file, json_string_value(v), sizeof t->name - 1);
  ks_strlcpy(t->name, json_string_value(v), sizeof t->name);
  v = json_object_get(root, "class");
  if (!json_is_string(v))
    FAIL("%s: class: %s; give the kernel class, e.g. \"row_reduction\"", file,
         WHAT_WRONG(v, "a string"));
  ks_strlcpy(t->klass, json_string_value(v), sizeof t->klass);
  v = json_object_get(root, "description");
  if (json_is_string(v))
    ks_strlcpy(t->description, json_string_value(v), sizeof t->description);

  json_t *axes = json_object_get(root, "axes");
  if (!json_is_object(axes) || json_object_size(axes) == 0)
    FAIL("%s: axes: missing or empty; declare the sizes, e.g. {\"rows\": "
         "{\"type\": \"var\"}}",
         file);
  const char *name;
  json_object_foreach(axes, name, v) {
    if (t->n_axes >= KS_MAX_AXES)
      FAIL("%s: axes: more than %d axes", file, KS_MAX_AXES);
    ks_axis *a = &t->axes[t->n_axes++];
    if (!ks_is_c_name(name) || strlen(name) >= sizeof a->name)
      FAIL("%s: axes.%s: axis names must be C identifiers and no C keyword",
           file, name);
    ks_strlcpy(a->name, name, sizeof a->name);
    json_t *ty = json_is_object(v) ? json_object_get(v, "type") : NULL;
    const char *tys = json_is_string(ty) ? json_string_value(ty) : "";
    if (!strcmp(tys, "var")) {
      a->is_const = false;
    } else if (!strcmp(tys, "const")) {
      json_t *val = json_object_get(v, "value");
      if (!json_is_integer(val) || json_integer_value(val) <= 0)
        FAIL("%s: axes.%s.value: a const axis needs a positive integer value",
             file, name);
      a->is_const = true;
      a->value = json_integer_value(val);
    } else if (!strcmp(tys, "derived")) {
      /* parsed below, once every axis name is known */
      if (!json_is_string(json_object_get(v, "value")))
        FAIL("%s: axes.%s.value: a derived axis needs an expression over the "
             "other axes, e.g. \"experts + 1\"",
             file, name);
      a->is_const = true;
    } else {
      FAIL("%s: axes.%s.type: must be \"var\", \"const\" or \"derived\"", file,
           name);
    }
  }
  json_object_foreach(axes, name, v) {
    int ai = ks_task_axis_index(t, name);
    json_t *ty = json_object_get(v, "type");
    if (strcmp(json_string_value(ty), "derived"))
      continue;
    const char *names[KS_MAX_AXES];
    int nn = 0; /* only var and const axes: no chains of derived ones */
    for (int i = 0; i < t->n_axes; i++)
      if (!t->axes[i].is_const || t->axes[i].value > 0)
        names[nn++] = t->axes[i].name;
    ks_expr *e = NULL;
    if (ks_expr_parse(json_string_value(json_object_get(v, "value")), names, nn,
                      &e, err)) {
      ks_err_prefix(err, "%s: axes.%s.value: ", file, name);
      if (err)
        snprintf(err->msg + strlen(err->msg),
                 sizeof err->msg - strlen(err->msg),
                 "; a derived axis is arithmetic over var and const axes, "
                 "e.g. \"experts + 1\"");
      goto out;
    }
    t->axes[ai].derive = e;
    ks_strlcpy(t->axes[ai].derive_src,
               json_string_value(json_object_get(v, "value")),
               sizeof t->axes[ai].derive_src);
  }

  json_t *scalars = json_object_get(root, "scalars");
  if (scalars && !json_is_object(scalars))
    FAIL("%s: scalars: must be an object", file);
  json_object_foreach(scalars, name, v) {
    if (t->n_scalars >= KS_MAX_SCALARS)
      FAIL("%s: scalars: more than %d", file, KS_MAX_SCALARS);
    ks_scalar *s = &t->scalars[t->n_scalars++];
    if (!ks_is_c_name(name) || strlen(name) >= sizeof s->name)
      FAIL("%s: scalars.%s: names must be C identifiers and no C keyword", file,
           name);
    ks_strlcpy(s->name, name, sizeof s->name);
    json_t *dt = json_is_object(v) ? json_object_get(v, "dtype") : NULL;
    if (!json_is_string(dt) ||
        !ks_dtype_parse(json_string_value(dt), &s->dtype) ||
        !(s->dtype == KS_F32 || s->dtype == KS_I32 || s->dtype == KS_I64))
      FAIL("%s: scalars.%s.dtype: must be float32, int32 or int64", file, name);
    json_t *val = json_object_get(v, "value");
    if (!json_is_number(val))
      FAIL("%s: scalars.%s.value: %s; give a number", file, name,
           WHAT_WRONG(val, "a number"));
    s->value = json_number_value(val);
    double lo, hi;
    dtype_range(s->dtype, &lo, &hi);
    if (!(s->value >= lo && s->value <= hi))
      FAIL("%s: scalars.%s.value: %g is outside what %s holds (%g to %g); "
           "give a value in that range",
           file, name, s->value, ks_dtype_name(s->dtype), lo, hi);
    if (s->dtype != KS_F32 && s->value != floor(s->value))
      FAIL("%s: scalars.%s.value: %g is not a whole number; %s needs one", file,
           name, s->value, ks_dtype_name(s->dtype));
  }

  if (parse_tensors(file, t, json_object_get(root, "inputs"), "inputs", true,
                    err) ||
      parse_tensors(file, t, json_object_get(root, "outputs"), "outputs", false,
                    err))
    goto out;
  /* names share one C scope in the kernel's signature */
  {
    const char *all[KS_MAX_AXES + 2 * KS_MAX_TENSORS + KS_MAX_SCALARS];
    int n = 0;
    for (int i = 0; i < t->n_inputs; i++)
      all[n++] = t->inputs[i].name;
    for (int i = 0; i < t->n_outputs; i++)
      all[n++] = t->outputs[i].name;
    for (int i = 0; i < t->n_axes; i++)
      if (!t->axes[i].is_const)
        all[n++] = t->axes[i].name;
    for (int i = 0; i < t->n_scalars; i++)
      all[n++] = t->scalars[i].name;
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++)
        if (!strcmp(all[i], all[j]))
          FAIL("%s: the name \"%s\" is used twice among inputs, outputs, var "
               "axes and scalars; they share the kernel's parameter list, so "
               "rename one",
               file, all[i]);
  }

  v = json_object_get(root, "reference");
  if (!json_is_string(v))
    FAIL("%s: reference: %s; name the C file with the reference "
         "implementation, e.g. \"reference.c\"",
         file, WHAT_WRONG(v, "a string"));
  {
    const char *ref = json_string_value(v);
    if (ref[0] == '/')
      ks_strlcpy(t->reference_path, ref, sizeof t->reference_path);
    else
      snprintf(t->reference_path, sizeof t->reference_path, "%s/%s", t->dir,
               ref);
    struct stat st;
    if (stat(t->reference_path, &st) != 0)
      FAIL("%s: reference: file %s does not exist; create it or fix the path",
           file, t->reference_path);
    /* a device or pipe (/dev/stdin) would block or change between reads */
    if (!S_ISREG(st.st_mode))
      FAIL("%s: reference: %s is not a regular file; name the C file with "
           "the reference implementation, e.g. \"reference.c\"",
           file, t->reference_path);
  }

  for (int i = 0; i < KS_DTYPE_COUNT; i++)
    t->tol[i] = (ks_tolerance){0, 0};
  json_t *tol = json_object_get(root, "tolerance");
  if (tol && !json_is_object(tol))
    FAIL("%s: tolerance: must be an object keyed by dtype", file);
  json_object_foreach(tol, name, v) {
    ks_dtype dt;
    if (!ks_dtype_parse(name, &dt))
      FAIL("%s: tolerance.%s: unsupported dtype; use float32, float16, "
           "bfloat16, int32, int64 or uint8",
           file, name);
    json_t *at = json_is_object(v) ? json_object_get(v, "atol") : NULL;
    json_t *rt = json_is_object(v) ? json_object_get(v, "rtol") : NULL;
    if (!json_is_number(at) || !json_is_number(rt) ||
        json_number_value(at) < 0 || json_number_value(rt) < 0)
      FAIL("%s: tolerance.%s: needs non-negative numbers atol and rtol", file,
           name);
    t->tol[dt] = (ks_tolerance){json_number_value(at), json_number_value(rt)};
    t->tol_set[dt] = true;
  }

  json_t *cost = json_object_get(root, "cost");
  if (cost && !json_is_object(cost))
    FAIL("%s: cost: must be an object with \"bytes\" and/or \"flops\"", file);
  if (cost && (parse_cost(file, t, cost, "bytes", &t->cost_bytes,
                          t->cost_bytes_src, sizeof t->cost_bytes_src, err) ||
               parse_cost(file, t, cost, "flops", &t->cost_flops,
                          t->cost_flops_src, sizeof t->cost_flops_src, err)))
    goto out;

  json_t *wls = json_object_get(root, "workloads");
  if (!json_is_array(wls) || json_array_size(wls) == 0)
    FAIL("%s: workloads: missing or empty; give a list of axis bindings, e.g. "
         "[{\"rows\": 128, \"cols\": 1000}]",
         file);
  if (json_array_size(wls) > KS_MAX_WORKLOADS)
    FAIL("%s: workloads: more than %d", file, KS_MAX_WORKLOADS);
  size_t wi;
  json_t *wl;
  double mem = phys_bytes();
  json_array_foreach(wls, wi, wl) {
    ks_workload *w = &t->workloads[t->n_workloads++];
    if (!json_is_object(wl))
      FAIL("%s: workloads[%zu]: must be an object binding each var axis", file,
           wi);
    json_object_foreach(wl, name, v) {
      if (!strcmp(name, "device")) { /* where it runs, not an axis */
        const char *d = json_string_value(v);
        if (d && !strcmp(d, "cpu"))
          w->device = KS_DEV_CPU;
        else if (d && !strcmp(d, "gpu"))
          w->device = KS_DEV_GPU;
        else
          FAIL("%s: workloads[%zu].device: must be \"cpu\" or \"gpu\" "
               "(leave it out for a workload every backend runs)",
               file, wi);
        continue;
      }
      int ax = ks_task_axis_index(t, name);
      if (ax < 0)
        FAIL("%s: workloads[%zu].%s: unknown axis; the axes are declared "
             "under \"axes\"",
             file, wi, name);
      if (!json_is_integer(v) || json_integer_value(v) <= 0)
        FAIL("%s: workloads[%zu].%s: sizes must be positive integers", file, wi,
             name);
      if (t->axes[ax].derive)
        FAIL("%s: workloads[%zu].%s: derived axis, computed from the others; "
             "remove it from the workload",
             file, wi, name);
      if (t->axes[ax].is_const && json_integer_value(v) != t->axes[ax].value)
        FAIL("%s: workloads[%zu].%s: const axis is %lld everywhere; remove it "
             "from the workload",
             file, wi, name, (long long)t->axes[ax].value);
    }
    for (int a = 0; a < t->n_axes; a++) {
      if (t->axes[a].is_const) {
        w->axis[a] = t->axes[a].value;
        continue;
      }
      json_t *x = json_object_get(wl, t->axes[a].name);
      if (!x)
        FAIL("%s: workloads[%zu]: missing axis \"%s\"; every var axis needs a "
             "size in every workload",
             file, wi, t->axes[a].name);
      w->axis[a] = json_integer_value(x);
    }
    double vals[KS_MAX_AXES];
    for (int a = 0; a < t->n_axes; a++)
      vals[a] = (double)w->axis[a];
    for (int a = 0; a < t->n_axes; a++) {
      if (!t->axes[a].derive)
        continue;
      /* the expression's names are the non-derived axes, in task order */
      double sub[KS_MAX_AXES];
      int nn = 0;
      for (int i = 0; i < t->n_axes; i++)
        if (!t->axes[i].derive)
          sub[nn++] = vals[i];
      double d = ks_expr_eval(t->axes[a].derive, sub);
      if (!(d >= 1 && d < 9e15) || d != floor(d))
        FAIL("%s: workloads[%zu]: derived axis %s = %g, not a positive "
             "integer; fix the sizes or the axis expression",
             file, wi, t->axes[a].name, d);
      w->axis[a] = (int64_t)d;
    }
    for (int i = 0; i < t->n_inputs; i++) {
      const ks_init *in = &t->inputs[i].init;
      if (!in->a_expr)
        continue;
      ks_init r = ks_init_bounds(t, in, w);
      if (!isfinite(r.a) || !isfinite(r.b) || r.a > r.b)
        FAIL("%s: workloads[%zu]: inputs.%s.init: randint bounds are %g and "
             "%g here, not LO <= HI; fix the sizes or the bounds",
             file, wi, t->inputs[i].name, r.a, r.b);
    }
    /* in double: an int64 product of huge sizes can wrap to a small one */
    double bytes = 0;
    for (int i = 0; i < t->n_inputs + t->n_outputs; i++) {
      const ks_tensor *ts =
          i < t->n_inputs ? &t->inputs[i] : &t->outputs[i - t->n_inputs];
      double n = (double)ks_dtype_size(ts->dtype);
      for (int d = 0; d < ts->rank; d++)
        n *= (double)w->axis[ts->dims[d]];
      bytes += n;
    }
    /* the harness keeps inputs, their copies, outputs and reference outputs */
    if (bytes * 3 > mem / 2)
      FAIL("%s: workloads[%zu]: needs %.1f GiB of buffers (x3 for copies and "
           "reference), more than half of this machine's %.1f GiB; use "
           "smaller sizes",
           file, wi, bytes / (1 << 30), mem / (1 << 30));
    if (check_cost(file, t, t->cost_bytes, "bytes", wi, err) ||
        check_cost(file, t, t->cost_flops, "flops", wi, err))
      goto out;
  }
  rc = KS_OK;
out:
  json_decref(root);
  if (rc != KS_OK)
    ks_task_free(t);
  return rc;
#undef FAIL
}

void ks_task_free(ks_task *task) {
  for (int i = 0; i < task->n_axes; i++) {
    ks_expr_free(task->axes[i].derive);
    task->axes[i].derive = NULL;
  }
  for (int i = 0; i < task->n_inputs; i++) {
    ks_expr_free(task->inputs[i].init.a_expr);
    ks_expr_free(task->inputs[i].init.b_expr);
    task->inputs[i].init.a_expr = task->inputs[i].init.b_expr = NULL;
  }
  ks_expr_free(task->cost_bytes);
  ks_expr_free(task->cost_flops);
  task->cost_bytes = task->cost_flops = NULL;
}
