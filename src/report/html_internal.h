/* html_internal.h — helpers shared by html.c and html_tree.c (the report
 * page's sections). Not used outside src/report/. */
#ifndef KS_HTML_INTERNAL_H
#define KS_HTML_INTERNAL_H

#include "report/report.h"
#include "report/report_internal.h"

double ks_hnum(const json_t *o, const char *k);      /* NAN when absent */
const char *ks_hstr(const json_t *o, const char *k); /* "" when absent */
void ks_hbadge(ks_buf *b, const char *status);
void ks_hjson(ks_buf *b, const json_t *v);
void ks_hparams(ks_buf *b, const json_t *params);

/* html_tree.c: the world model (nested <details>, best path open) and the
 * best kernel with its diff. */
void ks_html_tree(ks_buf *b, const json_t *facts);
void ks_html_best(ks_buf *b, const json_t *facts);

#endif
