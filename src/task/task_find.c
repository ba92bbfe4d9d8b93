/* task_find.c — where a task is (DESIGN.md: Task, Command line): a folder
 * holding task.json, a task.json, or a built-in task name looked up in
 * KSEARCH_TASKS_DIR / the data folder (KSEARCH_HOME, else beside the
 * binary). Loads it with ks_task_load_json (task.c) and hashes task.json
 * with the reference, so a changed task is never resumed as the old one. */
#include "util/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAD(...) ks_err_set(err, KS_ERR_INPUT, __VA_ARGS__)

ks_code ks_task_load(const char *where, ks_task *task, ks_err *err) {
  char path[PATH_MAX];
  if (ks_dir_exists(where))
    snprintf(path, sizeof path, "%s/task.json", where);
  else if (ks_file_exists(where))
    ks_strlcpy(path, where, sizeof path);
  else if (!strchr(where, '/'))
    snprintf(path, sizeof path, "%s/%s/task.json", ks_builtin_tasks_dir(),
             where);
  else
    return BAD("%s: no such task folder or task.json; give a folder holding "
               "task.json, or a built-in task name (see `ksearch tasks`)",
               where);
  if (!ks_file_exists(path)) {
    if (!strchr(where, '/') && !ks_dir_exists(where))
      return BAD("%s: not a folder, a task.json or a built-in task; see "
                 "`ksearch tasks` for the built-in ones (looked in %s)",
                 where, ks_builtin_tasks_dir());
    return BAD("%s: missing task.json; a task folder holds task.json and the "
               "reference",
               path);
  }
  /* absolute, because the runner works in its own private folder */
  char abs_path[PATH_MAX];
  if (realpath(path, abs_path))
    ks_strlcpy(path, abs_path, sizeof path);
  char *text;
  if (ks_read_file(path, &text, NULL, err))
    return err->code;
  ks_code rc = ks_task_load_json(text, path, task, err);
  if (rc == KS_OK) {
    char *ref;
    size_t rlen;
    if (ks_read_file(task->reference_path, &ref, &rlen, err) == KS_OK) {
      task->hash = ks_hash64(ref, rlen, ks_hash_str(text, 0));
      free(ref);
    } else {
      rc = err->code;
      ks_task_free(task);
    }
  }
  free(text);
  return rc;
}

const char *ks_data_dir(void) {
  static char dir[PATH_MAX]; /* resolved once per process */
  if (!dir[0]) {
    const char *env = getenv("KSEARCH_HOME");
    if (env && *env) {
      ks_strlcpy(dir, env, sizeof dir);
    } else {
      char probe[PATH_MAX + 32];
      snprintf(probe, sizeof probe, "%s/../tasks", ks_exe_dir());
      if (ks_dir_exists(probe))
        snprintf(dir, sizeof dir, "%.*s/..", PATH_MAX - 8, ks_exe_dir());
      else
        snprintf(dir, sizeof dir, "%.*s/../share/ksearch", PATH_MAX - 20,
                 ks_exe_dir());
    }
  }
  return dir;
}

const char *ks_builtin_tasks_dir(void) {
  static char dir[PATH_MAX]; /* resolved once per process */
  if (!dir[0]) {
    const char *env = getenv("KSEARCH_TASKS_DIR");
    if (env && *env)
      ks_strlcpy(dir, env, sizeof dir);
    else
      snprintf(dir, sizeof dir, "%.*s/tasks", PATH_MAX - 8, ks_data_dir());
  }
  return dir;
}
