/* err.c — the one error-code space (ks_code) and its messages.
 *
 * Errors travel as values: a ks_code plus a ks_err holding a sentence that
 * names the file, the field and the fix. The CLI turns the code into the exit
 * code of DESIGN.md (0 ok, 1 candidate failed, 2 bad input, 3 environment).
 */
#include "ksearch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

ks_code ks_err_set(ks_err *err, ks_code code, const char *fmt, ...) {
  if (err) {
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return code;
}

ks_code ks_err_prefix(ks_err *err, const char *fmt, ...) {
  if (!err)
    return KS_OK;
  char head[1024], old[sizeof err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  size_t hl = strlen(head);
  if (hl >= sizeof err->msg)
    hl = sizeof err->msg - 1;
  memcpy(err->msg, head, hl);
  size_t ol = strnlen(old, sizeof err->msg - 1 - hl);
  memcpy(err->msg + hl, old, ol);
  err->msg[hl + ol] = 0;
  return err->code;
}

const char *ks_code_name(ks_code code) {
  switch (code) {
  case KS_OK: return "ok";
  case KS_ERR_CANDIDATE: return "candidate failed";
  case KS_ERR_INPUT: return "bad input";
  case KS_ERR_ENV: return "environment";
  case KS_ERR_UNIMPLEMENTED: return "not implemented";
  case KS_ERR_IO: return "i/o error";
  case KS_ERR_NOMEM: return "out of memory";
  case KS_ERR_INTERNAL: return "internal error";
  }
  return "unknown error";
}

int ks_exit_code(ks_code code) {
  switch (code) {
  case KS_OK: return 0;
  case KS_ERR_CANDIDATE: return 1;
  case KS_ERR_INPUT: return 2;
  case KS_ERR_ENV:
  case KS_ERR_UNIMPLEMENTED: return 3;
  default: return 3;
  }
}
