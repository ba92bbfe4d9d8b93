/* expr.h — arithmetic expressions over named sizes: the task's cost model
 * ("4*(2*rows*cols + cols)") and, later, launch geometry in candidate headers
 * ("global=(rows*LOCAL)"). Parsed once into a small tree, evaluated many
 * times in double precision. */
#ifndef KS_EXPR_H
#define KS_EXPR_H

#include "ksearch.h"

/* Lookup used when an expression's names are only known at evaluation time
 * (launch geometry over axes and parameters). Returns false if unknown. */
typedef bool (*ks_expr_lookup)(void *ctx, const char *name, double *value);

/* Deepest nesting accepted (brackets, signs, powers, operator chains): deep
 * enough for any real cost model, shallow enough for the stack. */
#define KS_EXPR_MAX_DEPTH 200
#define KS_EXPR_MAX_DEPTH_TEXT "200"

/* Parses src. When names is not NULL every identifier must be one of them
 * (the message names the unknown identifier, its column and the known names).
 * Operators: + - * / % ^ (power) ( ); functions min, max, ceil, floor, cdiv
 * (ceiling division), sqrt, log2. Deeper than KS_EXPR_MAX_DEPTH is an error. */
ks_code ks_expr_parse(const char *src, const char *const *names, int n_names,
                      ks_expr **out, ks_err *err);
/* Evaluates with values[i] bound to names[i] from the parse. */
double ks_expr_eval(const ks_expr *e, const double *values);
/* Evaluates resolving each identifier by name. */
ks_code ks_expr_eval_lookup(const ks_expr *e, ks_expr_lookup fn, void *ctx,
                            double *out, ks_err *err);
void ks_expr_free(ks_expr *e);

#endif
