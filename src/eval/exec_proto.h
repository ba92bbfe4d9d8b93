/* exec_proto.h — the executor protocol: what the judge (ksearch) and an
 * executor (ksearch-runner, or any program in another language that follows
 * this page) say to each other (DESIGN.md: Evaluation, Executor protocol).
 *
 * The executor is a child with these descriptors:
 *   0 /dev/null   1, 2 its log (captured, capped)
 *   3 events      executor -> judge, one JSON object per line
 *   4 commands    judge -> executor, one JSON object per line
 *   5 inputs      memfd, sealed against writes by anyone but the judge:
 *                 the executor can only map it read-only (MAP_SHARED)
 *   6 outputs     memfd the executor maps read-write; the judge reads it
 *                 only while the executor is stopped (SIGSTOP)
 * The first command is the job; then the judge drives every step and waits
 * for its one answer. Everything the executor sends is hostile input: a line
 * is at most KS_EXEC_MAX_LINE bytes, must be a JSON object with a known "ev"
 * and exactly the fields of that event, with the id of the command it
 * answers. The parser here is the judge's only reader of that stream.
 */
#ifndef KS_EXEC_PROTO_H
#define KS_EXEC_PROTO_H

#include "ksearch.h"

#include <stddef.h>
#include <stdint.h>

#define KS_EXEC_EV_FD 3
#define KS_EXEC_CMD_FD 4
#define KS_EXEC_IN_FD 5
#define KS_EXEC_OUT_FD 6
#define KS_EXEC_MAX_LINE 4096
#define KS_EXEC_MAX_JOB (1 << 20)
#define KS_EXEC_GUARD 4096
#define KS_EXEC_GUARD_BYTE 0xCB

typedef enum ks_exec_ev_kind {
  KS_EV_NONE,
  KS_EV_READY,     /* {"ev":"ready"}: job read, sandbox closed */
  KS_EV_LOADED,    /* {"ev":"loaded"}: artifact loaded */
  KS_EV_PONG,      /* {"ev":"pong","id":N} */
  KS_EV_PREPPED,   /* {"ev":"prepped","id":N} */
  KS_EV_RET,       /* {"ev":"ret","id":N,"ns":T[,"dev_ns":D]} */
  KS_EV_COLLECTED, /* {"ev":"collected","id":N[,"fail":"why"]} */
  KS_EV_PROBED,    /* {"ev":"probed","id":N,"ns":T[,"fl":F]} */
  KS_EV_ERROR,     /* {"ev":"error","code":C,"message":"..."} setup */
  KS_EV_ALLOC,     /* {"ev":"alloc_failed","bytes":B} any time */
  KS_EV_SIGSYS,    /* {"ev":"sigsys","nr":N} any time, then death */
  KS_EV_FAULT,     /* {"ev":"fault","sig":S,"what":"..."} then death */
} ks_exec_ev_kind;

typedef struct ks_exec_event {
  ks_exec_ev_kind kind;
  int64_t id;     /* commands' answers */
  int64_t ns;     /* ret, probed: the executor's own time of the call */
  int64_t dev_ns; /* ret: device time, -1 when not sent */
  int64_t value;  /* error: code; alloc_failed: bytes; sigsys/fault: nr;
                     probed: the compute probe's flops (0: bytes moved) */
  char text[512]; /* error: message; collected: fail; fault: what */
} ks_exec_event;

const char *ks_exec_ev_name(ks_exec_ev_kind k);
/* Parses one line (without its newline). Returns true with *ev filled, or
 * false with the reason in why ("not JSON", "unknown event \"x\"",
 * "unexpected field \"y\" in ret", ...). Never trusts lengths or types. */
bool ks_exec_parse_event(const char *line, size_t len, ks_exec_event *ev,
                         char *why, size_t n);

#endif
