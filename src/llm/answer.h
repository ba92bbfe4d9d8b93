/* answer.h — reading what a model wrote (issue 4, "Parsing"): the JSON value
 * of a world-model answer (fenced ```json blocks first, then the first
 * balanced {...} or [...] outside strings), and the code of a coder answer
 * (the longest fenced block in the backend's language, else the backend's
 * file tags <file name="...">...</file>, else the whole answer when it
 * plainly is code), with the `// ksearch:` header added when the model left it
 * out. Every failure comes with a sentence the next re-ask can quote. */
#ifndef KS_LLM_ANSWER_H
#define KS_LLM_ANSWER_H

#include "ksearch.h"

#include <jansson.h>

/* Length of the balanced JSON value starting at s[0] ('{' or '['), strings
 * and escapes respected; 0 when it does not close within n bytes (a cut
 * answer) or closes with the wrong bracket. */
size_t ks_llm_balanced(const char *s, size_t n);

/* The JSON value an answer carries; *out a new reference (object or
 * array). KS_ERR_INPUT with `why` (for the re-ask) when there is none, it is
 * cut off, or it does not parse. */
ks_code ks_llm_extract_json(const char *text, json_t **out, char *why,
                            size_t why_n);

/* The code of an answer for `backend` ("c"); malloc'd, or NULL with `why`. */
char *ks_llm_extract_code(const char *text, const char *backend, char *why,
                          size_t why_n);

/* The code with a `// ksearch: backend=B entry=E` first line when no header
 * line names the backend; malloc'd. */
char *ks_llm_ensure_header(const char *code, const char *backend,
                           const char *entry);

#endif
