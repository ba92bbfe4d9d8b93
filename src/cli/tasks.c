/* tasks.c — `ksearch tasks [--json]`: the built-in task library. */
#include "cli/cli.h"
#include "util/util.h"

#include <dirent.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int ks_cmd_tasks(int argc, char **argv) {
  bool as_json = false;
  static const struct option opts[] = {{"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 'j')
      as_json = true;
    else if (c == 'h') {
      puts("usage: ksearch tasks [--json]\n\nLists the built-in tasks "
           "(folder: $KSEARCH_TASKS_DIR, else tasks/ beside the binary).");
      return 0;
    } else
      return ks_cli_fail(2, "tasks: unknown option; usage: ksearch tasks "
                            "[--json]");
  }
  if (optind < argc) { /* `ksearch tasks junk` is a typo, not a listing */
    fprintf(stderr,
            "ksearch tasks: unexpected argument \"%s\"; usage: ksearch "
            "tasks [--json] (to evaluate a task: ksearch eval TASK KERNEL)\n",
            argv[optind]);
    return 2;
  }
  const char *dir = ks_builtin_tasks_dir();
  DIR *d = opendir(dir);
  if (!d) {
    char msg[1200];
    snprintf(msg, sizeof msg,
             "%s: no built-in task folder; set KSEARCH_TASKS_DIR or "
             "KSEARCH_HOME",
             dir);
    return ks_cli_fail(3, msg);
  }
  char *names[256];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 256)
    if (e->d_name[0] != '.')
      names[n++] = ks_strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp);
  json_t *arr = json_array();
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    free(names[i]);
    if (!ks_dir_exists(path))
      continue;
    ks_task *t = ks_xcalloc(1, sizeof *t);
    ks_err err;
    if (ks_task_load(path, t, &err)) {
      fprintf(stderr, "ksearch: %s\n", err.msg);
      rc = 2;
      free(t);
      continue;
    }
    json_t *wls = json_array();
    for (int w = 0; w < t->n_workloads; w++) {
      json_t *ax = json_object();
      for (int a = 0; a < t->n_axes; a++)
        if (!t->axes[a].is_const)
          json_object_set_new(ax, t->axes[a].name,
                              json_integer(t->workloads[w].axis[a]));
      json_array_append_new(wls, ax);
    }
    if (as_json) {
      json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:o}", "name",
                                           t->name, "class", t->klass,
                                           "description", t->description,
                                           "path", path, "workloads", wls));
    } else {
      printf("%-16s %-14s %s\n", t->name, t->klass, t->description);
      for (int w = 0; w < t->n_workloads; w++) {
        char buf[256];
        ks_workload_format(t, &t->workloads[w], buf, sizeof buf);
        printf("%-16s   workload %d: %s (%.1f MiB moved)\n", "", w, buf,
               ks_task_cost_bytes(t, &t->workloads[w]) / (1 << 20));
      }
      json_decref(wls);
    }
    ks_task_free(t);
    free(t);
  }
  if (as_json) {
    json_t *o = json_pack("{s:o}", "tasks", arr);
    char *s = json_dumps(o, JSON_INDENT(2));
    puts(s);
    free(s);
    json_decref(o);
  } else {
    json_decref(arr);
  }
  return rc;
}
