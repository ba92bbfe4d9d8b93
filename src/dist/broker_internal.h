/* broker_internal.h — what broker.c shares with stream.c: the connection
 * and one command through it. Not for use outside src/dist/. */
#ifndef KS_DIST_BROKER_INTERNAL_H
#define KS_DIST_BROKER_INTERNAL_H

#include "dist/broker.h"

#include <hiredis/hiredis.h>

struct ks_broker {
  ks_broker_url url;
  redisContext *c;
};

/* Sends argv (argc strings) and returns the reply (freeReplyObject it).
 * A broken connection is KS_ERR_IO; an error reply KS_ERR_ENV with the
 * server's message, and *out is then NULL. */
ks_code ks_broker_cmd(ks_broker *b, int argc, const char **argv,
                      redisReply **out, ks_err *err);

#endif
