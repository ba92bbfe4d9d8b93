/* spec.h — targets and the concept catalogue, loaded from the data folder
 * (DESIGN.md: Spec and concept catalogue).
 *
 * A target (specs/targets/<id>.json) holds documented or measured facts, each
 * with its source, and the primitives code may use there: rules the
 * validator applies (forbidden identifiers with the nearest valid
 * alternative; identifiers that need an extension pragma or a CPU feature)
 * and `from_cuda`, the CUDA identifiers that have a literal form on the
 * target (the translator rewrites with it; the validator suggests it).
 *
 * A concept (specs/concepts/<id>.json) is one optimization idea: how to
 * recognise it in CUDA source, its native form on each target, caveats, and
 * what has no direct equivalent. Both are data: adding a concept or a target
 * is adding a file. */
#ifndef KS_SPEC_H
#define KS_SPEC_H

#include "ksearch.h"

#include <jansson.h>

/* ------------------------------------------------------------ targets */

typedef enum ks_rule_kind {
  KS_RULE_IDENT,     /* exact identifier (or `a.b` member form) */
  KS_RULE_PREFIX,    /* identifier prefix */
  KS_RULE_REGEX,     /* POSIX ERE over one identifier */
  KS_RULE_QUALIFIED, /* prefix of a qualified name: "wmma::", "cuda::memcpy" */
  KS_RULE_PTX,       /* substring of an inline-assembly string ("cp.async") */
  KS_RULE_PUNCT,     /* a punctuator ("<<<") */
  KS_RULE_INCLUDE    /* an #include'd header name */
} ks_rule_kind;

typedef struct ks_spec_rule {
  ks_rule_kind kind;
  char match[96];
  char pragma[48]; /* allowed once `#pragma OPENCL EXTENSION <pragma>` */
  char cpu[32];    /* allowed when the CPU has this /proc/cpuinfo flag */
  char use[128];   /* the nearest valid alternative */
  void *re;        /* compiled regex_t for KS_RULE_REGEX */
} ks_spec_rule;

typedef struct ks_spec_target {
  char id[48];       /* file name without .json */
  char backend[16];  /* "c", "opencl", "cuda", "metal" */
  char language[24]; /* "c", "opencl_c", "cuda", "msl" */
  char name[160];
  char path[1024];
  json_t *json;      /* the merged document ("extends" resolved) */
  json_t *from_cuda; /* borrowed from json: CUDA name -> target template */
  int n_rules;
  ks_spec_rule *rules;
  int n_unsupported;
  char unsupported_ext[16][48]; /* extensions this device lacks */
} ks_spec_target;

/* Resolves "c", "opencl", "cuda", "metal", "mlx" (the backend's default
 * target) or a target id ("opencl-pocl-cpu") and loads it. The result is
 * cached per process and must not be freed. Unknown names and malformed
 * files are KS_ERR_INPUT naming the file and field. */
ks_code ks_spec_target_get(const char *name, const ks_spec_target **out,
                           ks_err *err);
/* The id a short name resolves to ("c" -> "c-x86_64"); the name itself when
 * it is already an id. */
const char *ks_spec_target_id(const char *name);
/* The target's facts with run-time detection filled in: for c-x86_64 the
 * ISA levels this CPU has and the cached roofline measurement, if any.
 * New reference. */
json_t *ks_spec_target_facts(const ks_spec_target *t);

/* Whether this CPU has a /proc/cpuinfo flag ("avx2", "avx512f", "fma"...);
 * detected once at run time (__builtin_cpu_supports, else /proc/cpuinfo). */
bool ks_cpu_has(const char *flag);
/* Tests only: pretend the CPU has exactly these space-separated flags (NULL:
 * the real CPU again). */
void ks_cpu_flags_override(const char *flags);

/* ------------------------------------------------------------ concepts */

typedef enum ks_detect_kind {
  KS_DETECT_IDENT,       /* exact identifier or qualified name */
  KS_DETECT_PREFIX,      /* identifier prefix */
  KS_DETECT_IDENT_REGEX, /* ERE over one identifier */
  KS_DETECT_REGEX,       /* ERE over the file's normalized token text */
  KS_DETECT_PTX          /* substring of an inline-assembly string */
} ks_detect_kind;

typedef struct ks_detect {
  ks_detect_kind kind;
  char pattern[256];
  void *re; /* compiled regex_t for the regex kinds */
} ks_detect;

typedef struct ks_concept {
  char id[48];
  char name[96];
  json_t *json; /* the whole file */
  int n_detect;
  ks_detect *detect;
} ks_concept;

typedef struct ks_concept_set {
  int n;
  ks_concept *c;
  char dir[1024];
} ks_concept_set;

/* Loads every specs/concepts/<id>.json (sorted by id); cached per process, not
 * to be freed. An id must equal its file name; duplicate ids, missing
 * fields and bad regexes are KS_ERR_INPUT naming the file and field. */
ks_code ks_concepts_get(const ks_concept_set **out, ks_err *err);
const ks_concept *ks_concept_find(const ks_concept_set *s, const char *id);
/* The concept's native form on a backend ("opencl", "metal", "c", "cuda"),
 * as one line of text; NULL when it has none. */
const char *ks_concept_form(const ks_concept *c, const char *backend);
/* The "no direct equivalent" entry ({target, what, alternative}) that
 * applies to a target id ("opencl-pocl-cpu") or its backend ("opencl"), the
 * more specific first; NULL when the concept carries over. Borrowed. */
const json_t *ks_concept_gap(const ks_concept *c, const char *target_id,
                             const char *backend);

/* The specs folder: <data dir>/specs. */
const char *ks_spec_dir(void);

#endif
