/* hook.c — writing the page (ks_report_write) and the search loop's hook
 * after each stored evaluation (ks_report_after_evaluation; DESIGN.md:
 * Search loop, Report). The hook also records the session's context (command
 * line, host, roofline) as a `run_context` event, so that a later `ksearch
 * report` of the folder shows the machine the run was measured on. */
#include "report/report.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ks_code ks_report_write(const char *run_dir, ks_store *store, bool live,
                        const char *out_path, ks_err *err) {
  json_t *facts = NULL;
  ks_code rc = ks_report_facts(run_dir, store, live, &facts, err);
  if (rc)
    return rc;
  char *html = ks_report_html(facts);
  json_decref(facts);
  char path[4096];
  if (!out_path) {
    snprintf(path, sizeof path, "%s/%s", run_dir, KS_REPORT_FILE);
    out_path = path;
  }
  rc = ks_write_file_atomic(out_path, html, strlen(html), err);
  free(html);
  return rc;
}

/* Adds a run_context event unless the latest one says the same. */
static ks_code record_context(ks_store *store, const ks_roofline *rl,
                              const char *command_line, ks_err *err) {
  char host[256] = "";
  if (gethostname(host, sizeof host - 1))
    host[0] = 0;
  json_t *ctx = json_pack(
      "{s:s, s:s, s:o}", "command_line", command_line ? command_line : "",
      "host", host, "roofline", rl ? ks_roofline_to_json(rl) : json_null());
  if (!ctx)
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "report: the command line is not UTF-8 text");
  json_t *ev = NULL;
  ks_code rc = ks_store_list_events(store, "run_context", &ev, err);
  size_t n = json_array_size(ev);
  const json_t *last =
      n ? json_object_get(json_array_get(ev, n - 1), "json") : NULL;
  if (!rc && !(last && json_equal(last, ctx))) {
    char *text = json_dumps(ctx, JSON_COMPACT);
    rc = ks_store_add_event(store, "run_context", text, err);
    free(text);
  }
  json_decref(ev);
  json_decref(ctx);
  return rc;
}

void ks_report_after_evaluation(ks_store *store, const char *run_dir,
                                const ks_roofline *roofline,
                                const char *command_line, bool write_page) {
  ks_err err = {0};
  if (record_context(store, roofline, command_line, &err))
    ks_log(KS_LOG_INFO, "warning: the run's context was not recorded: %s",
           err.msg);
  if (write_page && ks_report_write(run_dir, store, true, NULL, &err))
    ks_log(KS_LOG_INFO, "warning: %s/%s was not rewritten: %s", run_dir,
           KS_REPORT_FILE, err.msg);
}
