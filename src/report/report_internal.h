/* report_internal.h — what the files of src/report/ share: HTML escaping,
 * the charts and the line diff. Not used outside src/report/. */
#ifndef KS_REPORT_INTERNAL_H
#define KS_REPORT_INTERNAL_H

#include "util/util.h"

#include <jansson.h>

/* Appends s with & < > " ' escaped (text and attribute values alike). */
void ks_html_esc(ks_buf *b, const char *s);
/* A JSON string of n bytes at p, invalid UTF-8 bytes replaced by '?'
 * (candidate sources are hostile and JSON strings must be UTF-8). */
json_t *ks_report_str(const char *p, size_t n);
/* The colour of an evaluation or node status (CSS colour). */
const char *ks_report_status_colour(const char *status);

/* Charts as inline <svg> elements (svg.c); each draws a note in place of
 * the chart when there is nothing to draw. */
void ks_svg_progress(ks_buf *b, const json_t *facts);
void ks_svg_roofline(ks_buf *b, const json_t *facts);

/* Line diff of a against b (diff.c): a JSON array of [op, text] pairs, op
 * " " (same), "-" (only in a), "+" (only in b) or "~" (text says how many
 * unchanged lines were skipped), with `context` unchanged lines kept around
 * each change. Inputs of more than max_lines lines after their common head
 * and tail are not diffed: NULL. */
json_t *ks_report_diff(const char *a, const char *b, int context,
                       int max_lines);

#endif
