/* cache.c — `--llm-cache DIR`: one JSON file per distinct request, so a run
 * can be replayed offline and the tests need no network (llm.h, issue 4).
 *
 * The key covers what decides an answer (model, sampling options, messages)
 * and nothing that does not (stream flags, endpoint URL). Decimal numbers in
 * the messages are masked: the prompts quote measured timings and speedups,
 * which differ between two runs of the same search, and a replay must find
 * the answers of the first. So are the lines naming this machine (its
 * device, threads): a cache recorded on one machine replays on another. Files
 * are written atomically (temp + rename); a damaged file is a miss, never an
 * error. What masking cannot make equal (a prompt that quotes the other
 * machine's roofline, a workload classed latency-bound there) is what
 * order-matched replay is for: a miss takes the next recorded answer of the
 * same prompt kind, as a scripted server would give it. */
#include "llm/llm.h"
#include "util/util.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void ks_llm_cache_key(const json_t *request, char out[33]) {
  json_t *k = json_object();
  static const char *const keep[] = {"model", "temperature", "max_tokens",
                                     "reasoning_effort", NULL};
  for (int i = 0; keep[i]; i++) {
    json_t *v = json_object_get(request, keep[i]);
    if (v)
      json_object_set(k, keep[i], v);
  }
  json_t *msgs = json_array();
  size_t i;
  json_t *m;
  json_array_foreach(json_object_get(request, "messages"), i, m) {
    const char *content = json_string_value(json_object_get(m, "content"));
    char *machine = ks_llm_mask_machine(content ? content : "");
    char *masked = ks_llm_mask_decimals(machine);
    free(machine);
    json_t *role = json_object_get(m, "role");
    json_array_append_new(
        msgs, json_pack("{s:O?, s:s}", "role", role, "content", masked));
    free(masked);
  }
  json_object_set_new(k, "messages", msgs);
  char *text = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(k);
  char a[17], b[17];
  ks_hash_hex(ks_hash_str(text ? text : "", 0x6b73), a);
  ks_hash_hex(ks_hash_str(text ? text : "", 0x9e3779b97f4a7c15ULL), b);
  free(text);
  memcpy(out, a, 16);
  memcpy(out + 16, b, 16);
  out[32] = 0;
}

static void entry_path(const char *dir, const char *key, char *out, size_t n) {
  snprintf(out, n, "%s/%s.json", dir, key);
}

/* The answer of a loaded entry into *out; false (logged) when unreadable. */
static bool entry_answer(const char *path, json_t *j, const char *why,
                         ks_llm_reply *out) {
  json_t *a = json_object_get(j, "answer");
  const char *t = json_string_value(json_object_get(a, "text"));
  const char *o = json_string_value(json_object_get(a, "outcome"));
  ks_llm_outcome oc;
  if (!t || !o || !ks_llm_outcome_parse(o, &oc)) {
    ks_log(KS_LOG_INFO, "llm cache: %s is unreadable (%s); asking the server",
           path, j ? "no answer.text or answer.outcome" : why);
    return false;
  }
  out->text = ks_strdup(t);
  out->outcome = oc;
  json_t *pt = json_object_get(a, "prompt_tokens");
  json_t *ct = json_object_get(a, "completion_tokens");
  out->prompt_tokens = json_is_integer(pt) ? json_integer_value(pt) : 0;
  out->completion_tokens = json_is_integer(ct) ? json_integer_value(ct) : 0;
  const char *f = json_string_value(json_object_get(a, "finish_reason"));
  ks_strlcpy(out->finish_reason, f ? f : "", sizeof out->finish_reason);
  out->from_cache = true;
  return true;
}

void ks_llm_cache_get(const char *dir, const char *key, bool *hit,
                      ks_llm_reply *out) {
  *hit = false;
  memset(out, 0, sizeof *out);
  char path[2048];
  entry_path(dir, key, path, sizeof path);
  if (!ks_file_exists(path))
    return;
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  *hit = entry_answer(path, j, je.text, out);
  json_decref(j);
}

void ks_llm_prompt_kind(const json_t *request, char *out, size_t n) {
  out[0] = 0;
  json_t *msgs = json_object_get(request, "messages");
  for (size_t i = json_array_size(msgs); i-- > 0;) {
    json_t *m = json_array_get(msgs, i);
    const char *role = json_string_value(json_object_get(m, "role"));
    const char *c = json_string_value(json_object_get(m, "content"));
    if (!role || strcmp(role, "user") || !c)
      continue;
    const char *k = strstr(c, "(ksearch prompt: ");
    if (k) {
      k += strlen("(ksearch prompt: ");
      size_t len = strcspn(k, ")\n");
      if (len >= n)
        len = n - 1;
      memcpy(out, k, len);
      out[len] = 0;
    }
    return;
  }
}

void ks_llm_cache_get_next(const char *dir, const json_t *request, json_t *used,
                           char key_out[33], bool *hit, ks_llm_reply *out) {
  *hit = false;
  memset(out, 0, sizeof *out);
  key_out[0] = 0;
  char want[64], kind[64];
  ks_llm_prompt_kind(request, want, sizeof want);
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  char best[2048] = "";
  json_t *best_j = NULL;
  double best_t = 0;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len != 37 || strcmp(e->d_name + 32, ".json"))
      continue;
    char key[33];
    memcpy(key, e->d_name, 32);
    key[32] = 0;
    if (json_object_get(used, key))
      continue;
    char path[2048];
    entry_path(dir, key, path, sizeof path);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j)
      continue;
    ks_llm_prompt_kind(json_object_get(j, "request"), kind, sizeof kind);
    json_t *rn = json_object_get(j, "recorded_ns");
    double t;
    struct stat st;
    if (json_is_integer(rn))
      t = (double)json_integer_value(rn);
    else if (!stat(path, &st))
      t = (double)st.st_mtim.tv_sec * 1e9 + (double)st.st_mtim.tv_nsec;
    else
      t = 0;
    if (strcmp(kind, want) || (best_j && t >= best_t)) {
      json_decref(j);
      continue;
    }
    json_decref(best_j);
    best_j = j;
    ks_strlcpy(best, path, sizeof best);
    memcpy(key_out, key, 33);
    best_t = t;
  }
  closedir(d);
  if (!best_j)
    return;
  *hit = entry_answer(best, best_j, "", out);
  json_decref(best_j);
  json_object_set_new(used, key_out, json_true());
}

ks_code ks_llm_cache_put(const char *dir, const char *key,
                         const json_t *request, const ks_llm_reply *r,
                         ks_err *err) {
  ks_code rc = ks_mkdir_p(dir, err);
  if (rc)
    return ks_err_prefix(err, "--llm-cache %s: ", dir);
  json_t *j = json_pack(
      "{s:i, s:s, s:I, s:O, s:{s:s, s:s, s:I, s:I, s:s}}", "version", 1, "key",
      key, "recorded_ns",
      (json_int_t)ks_wall_ns() /* order across runs and resumes */, "request",
      request, "answer", "text", r->text ? r->text : "", "outcome",
      ks_llm_outcome_name(r->outcome), "prompt_tokens",
      (json_int_t)r->prompt_tokens, "completion_tokens",
      (json_int_t)r->completion_tokens, "finish_reason", r->finish_reason);
  if (!j)
    return ks_err_set(err, KS_ERR_INTERNAL,
                      "llm cache: cannot encode the answer as JSON");
  char *s = json_dumps(j, JSON_INDENT(1));
  json_decref(j);
  char path[2048];
  entry_path(dir, key, path, sizeof path);
  rc = ks_write_file_atomic(path, s, strlen(s), err);
  free(s);
  return rc;
}
