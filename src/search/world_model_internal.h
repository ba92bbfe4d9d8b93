/* world_model_internal.h — what the world_model*.c files share and nobody
 * else uses: node allocation, the tree's storage, field parsing and range
 * checks. The parser and the checks serve both edit scripts and
 * world_model.json, so an LLM edit and a loaded file obey the same rules. */
#ifndef KS_WORLD_MODEL_INTERNAL_H
#define KS_WORLD_MODEL_INTERNAL_H

#include "search/world_model.h"

struct ks_wm {
  ks_wm_node **nodes; /* storage order: insertion order, or file order */
  int n, cap;
  long next_id;  /* next k for "n<k>" */
  json_t *index; /* id -> position in nodes */
};

/* Allocation that aborts on exhaustion: only small bookkeeping lives here. */
void *ks_wmi_xmalloc(size_t n);
void *ks_wmi_xrealloc(void *p, size_t n);
char *ks_wmi_xstrdup(const char *s);
void ks_wmi_set_str(char **dst, const char *s); /* frees the old value */

ks_wm_node *
ks_wmi_node_new(void); /* defaults of ks_wm_spec_init, status open */
void ks_wmi_node_free(ks_wm_node *n);
ks_wm_node *ks_wmi_node_clone(const ks_wm_node *n); /* links cleared */

ks_wm *ks_wmi_alloc(void); /* empty tree, no root */
ks_wm_node *ks_wmi_get(const ks_wm *wm, const char *id);
/* Appends (taking ownership) and indexes; the parent link is set when the
 * parent is already present. Callers check uniqueness first. */
void ks_wmi_append(ks_wm *wm, ks_wm_node *n);
/* Removes and frees the node at pos. */
void ks_wmi_remove_at(ks_wm *wm, int pos);
/* Recomputes index, up, n_children, depth and pos for every node. Parents
 * must exist and form no cycle (checked by the callers). */
void ks_wmi_relink(ks_wm *wm);
/* Keeps next_id past an id of the form "n<k>". */
void ks_wmi_note_id(ks_wm *wm, const char *id);
/* Exchanges the contents of two trees (for all-or-nothing edits). */
void ks_wmi_swap(ks_wm *a, ks_wm *b);

/* "where.field" (or "field" when where is empty) into buf. */
const char *ks_wmi_path(char *buf, size_t n, const char *where,
                        const char *field);
bool ks_wmi_id_ok(const char *id);
bool ks_wmi_utf8_ok(const char *s);

/* JSON helpers of world_model_fields.c that world_model_json.c reuses. */
const char *ks_wmi_type_name(const json_t *v); /* "a string", "null", ... */
ks_code ks_wmi_type_err(ks_err *err, const char *path, const char *want,
                        const json_t *v);
/* An integer (3.0 counts) within lo..hi; range_hint ends the message. */
ks_code ks_wmi_get_int(const json_t *v, const char *path, long long lo,
                       long long hi, const char *range_hint, long long *out,
                       ks_err *err);

/* Which keys ks_wmi_parse_fields accepts. */
enum {
  WM_F_ID = 1 << 0,
  WM_F_PARENT = 1 << 1,
  WM_F_DECISION = 1 << 2,
  WM_F_CHOICE = 1 << 3,
  WM_F_STATUS = 1 << 4,
  WM_F_SPLIT = 1 << 5,
  WM_F_ACTION = 1 << 6,
  WM_F_CONCEPTS = 1 << 7,
  WM_F_PARAMS = 1 << 8,
  WM_F_SOLUTION = 1 << 9,
  WM_F_ATTEMPTS = 1 << 10,
  WM_F_EVIDENCE = 1 << 11,
  WM_F_NOTES = 1 << 12,
  WM_F_ALL = (1 << 13) - 1,
  /* insert (and split children): a new open node */
  WM_F_INSERT = WM_F_ID | WM_F_PARENT | WM_F_DECISION | WM_F_CHOICE |
                WM_F_STATUS | WM_F_ACTION | WM_F_CONCEPTS | WM_F_PARAMS |
                WM_F_NOTES,
  WM_F_UPDATE = WM_F_DECISION | WM_F_CHOICE | WM_F_STATUS | WM_F_ACTION |
                WM_F_CONCEPTS | WM_F_PARAMS | WM_F_SOLUTION | WM_F_ATTEMPTS |
                WM_F_EVIDENCE | WM_F_NOTES,
};

/* Parses the keys of `obj` into n (absent keys keep their values). Keys in
 * `skip` (NULL-terminated, may be NULL) are ignored; keys outside `allowed`
 * are rejected. merge_params: JSON merge patch instead of replacement. Type
 * errors and integer ranges are reported here; the rest by ks_wmi_node_check.
 */
ks_code ks_wmi_parse_fields(const json_t *obj, ks_wm_node *n, unsigned allowed,
                            const char *const *skip, bool merge_params,
                            const char *where, ks_err *err);
/* Range and consistency checks of one node on its own (not its place in the
 * tree). is_root relaxes decision/choice/solution rules. */
ks_code ks_wmi_node_check(const ks_wm_node *n, bool is_root, const char *where,
                          ks_err *err);

#endif
