/* report.h — the run report (DESIGN.md: Report): one self-contained HTML
 * page per run folder, and the same facts as JSON for `ksearch show --json`.
 *
 * Everything comes from the run folder: ksearch.db (store), world_model.json
 * and summary.json. ks_report_facts gathers the facts once (facts.c); the
 * page is drawn from those facts alone (html.c, with charts from svg.c and
 * the diff from diff.c), so the page and `show --json` cannot disagree. The
 * page loads nothing: no script, no external style, font or image, and a
 * Content-Security-Policy that forbids any load, so it opens offline and can
 * be attached to a bug.
 *
 * `ksearch run --report` rewrites the page after every evaluation
 * (ks_report_after_evaluation, called by the search loop), atomically, so a
 * browser refresh shows a search in progress.
 */
#ifndef KS_REPORT_H
#define KS_REPORT_H

#include "backend/roofline.h"
#include "store/store.h"

#include <jansson.h>

#define KS_REPORT_FILE "report.html"
#define KS_REPORT_FACTS_VERSION 1

/* The facts of a run folder as one JSON object (DESIGN.md lists its keys).
 * store: an open store of run_dir (the search's own connection), or NULL to
 * open ksearch.db read-only here. live: the caller is the run itself, still
 * searching. A folder without ksearch.db is KS_ERR_INPUT naming it;
 * unreadable world_model.json or summary.json become notes, not errors. */
ks_code ks_report_facts(const char *run_dir, ks_store *store, bool live,
                        json_t **out, ks_err *err);

/* The page for a facts object (malloc'd, NUL-terminated). */
char *ks_report_html(const json_t *facts);

/* Gathers the facts and writes the page to out_path (NULL:
 * <run_dir>/report.html) through a temp file + rename. */
ks_code ks_report_write(const char *run_dir, ks_store *store, bool live,
                        const char *out_path, ks_err *err);

/* The search loop's hook, after each evaluation is stored: records the
 * session's context (command line, machine, roofline) as a `run_context`
 * event when the last one recorded differs, then, when write_page, rewrites
 * <run_dir>/report.html. Failures are logged as warnings: a report never
 * stops a search. */
void ks_report_after_evaluation(ks_store *store, const char *run_dir,
                                const ks_roofline *roofline,
                                const char *command_line, bool write_page);

#endif
