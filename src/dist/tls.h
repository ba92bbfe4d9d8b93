/* tls.h — rediss:// for a hiredis without TLS (DESIGN.md: Workers).
 *
 * Debian 12's hiredis is 0.14, which has no hiredis_ssl, and no newer one is
 * packaged for it (not in bookworm-backports either). So the TLS session is
 * OpenSSL's: ks_tls_tunnel connects, verifies the broker's certificate and
 * host name, and hands back one end of a local socket pair that carries the
 * plain Redis protocol (for redisConnectFd). A detached thread moves bytes
 * between the pair and the TLS connection until either side closes: closing
 * the hiredis context ends the tunnel, and a broken TLS connection reads as
 * a lost connection in hiredis, which the callers already reconnect from.
 *
 * Configuration from the environment: KSEARCH_BROKER_CACERT (PEM file of the
 * CAs to trust; else the system's), KSEARCH_BROKER_CERT and
 * KSEARCH_BROKER_KEY (a client certificate, for brokers that ask for one:
 * redis-server's tls-auth-clients, on by default). */
#ifndef KS_DIST_TLS_H
#define KS_DIST_TLS_H

#include "ksearch.h"

/* *fd: the local end, the caller's to close (redisFree does). A broker that
 * cannot be reached or whose handshake fails is KS_ERR_ENV, a certificate
 * or key file that cannot be used KS_ERR_INPUT; messages name host, port
 * and the fix. timeout_s bounds the connection and the handshake. */
ks_code ks_tls_tunnel(const char *host, int port, double timeout_s, int *fd,
                      ks_err *err);

#endif
