/* tls.c — the TLS tunnel of rediss:// (tls.h; DESIGN.md: Workers): TCP
 * connection with a deadline, OpenSSL handshake with certificate and host
 * name (or IP address) verification, and the thread that carries bytes
 * between hiredis's end of a socket pair and the TLS session. */
#include "dist/tls.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long the pump waits for the network to take a write before it gives
 * the connection up (hiredis then sees it lost and reconnects). */
#define PUMP_WRITE_MS 60000

typedef struct tunnel {
  SSL_CTX *ctx;
  SSL *ssl;
  int tcp;  /* non-blocking */
  int pair; /* our end of the socket pair, blocking */
} tunnel;

static void tunnel_free(tunnel *t) {
  if (t->ssl)
    SSL_free(t->ssl);
  if (t->ctx)
    SSL_CTX_free(t->ctx);
  if (t->tcp >= 0)
    close(t->tcp);
  if (t->pair >= 0)
    close(t->pair);
  free(t);
}

/* poll one fd for ev until ms pass; false on timeout or error. */
static bool wait_fd(int fd, short ev, int ms) {
  struct pollfd p = {fd, ev, 0};
  for (;;) {
    int r = poll(&p, 1, ms);
    if (r > 0)
      return true;
    if (r == 0 || errno != EINTR)
      return false;
  }
}

static int ms_left(double deadline) {
  double s = deadline - ks_now();
  return s <= 0 ? 0 : (int)(s * 1000) + 1;
}

/* The last OpenSSL error as text ("" when none), clearing the queue. */
static const char *ssl_why(char *buf, size_t n) {
  unsigned long e = ERR_get_error();
  buf[0] = '\0';
  if (e)
    ERR_error_string_n(e, buf, n);
  ERR_clear_error();
  return buf;
}

static ks_code tcp_connect(const char *host, int port, double deadline,
                           int *out, ks_err *err) {
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  struct addrinfo hints = {0}, *res = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int g = getaddrinfo(host, ps, &hints, &res);
  if (g)
    return ks_err_set(err, KS_ERR_ENV,
                      "cannot reach the broker at %s:%d: %s; fix the host in "
                      "--broker",
                      host, port, gai_strerror(g));
  int last = ECONNREFUSED;
  for (struct addrinfo *a = res; a; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    a->ai_protocol);
    if (fd < 0) {
      last = errno;
      continue;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
        (errno == EINPROGRESS && wait_fd(fd, POLLOUT, ms_left(deadline)))) {
      int so = 0;
      socklen_t sl = sizeof so;
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) == 0 && so == 0) {
        freeaddrinfo(res);
        *out = fd;
        return KS_OK;
      }
      last = so ? so : ETIMEDOUT;
    } else {
      last = errno == EINPROGRESS ? ETIMEDOUT : errno;
    }
    close(fd);
  }
  freeaddrinfo(res);
  return ks_err_set(err, KS_ERR_ENV,
                    "cannot reach the broker at %s:%d: %s; start "
                    "redis-server there with --tls-port %d or fix --broker",
                    host, port, strerror(last), port);
}

/* The context: TLS 1.2 or newer, peer verified against KSEARCH_BROKER_CACERT
 * or the system's CAs, the client certificate when one is given. */
static ks_code make_ctx(tunnel *t, ks_err *err) {
  char why[256];
  t->ctx = SSL_CTX_new(TLS_client_method());
  if (!t->ctx)
    return ks_err_set(err, KS_ERR_NOMEM, "broker: TLS: %s",
                      ssl_why(why, sizeof why));
  SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
  SSL_CTX_set_mode(t->ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  const char *ca = getenv("KSEARCH_BROKER_CACERT");
  if (ca && *ca) {
    if (SSL_CTX_load_verify_locations(t->ctx, ca, NULL) != 1)
      return ks_err_set(err, KS_ERR_INPUT,
                        "KSEARCH_BROKER_CACERT=%s: cannot load it as PEM "
                        "certificates (%s); give the file of the CA that "
                        "signed the broker's certificate",
                        ca, ssl_why(why, sizeof why));
  } else if (SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
    return ks_err_set(err, KS_ERR_ENV,
                      "broker: TLS: cannot load the system's CA "
                      "certificates (%s); set KSEARCH_BROKER_CACERT=FILE",
                      ssl_why(why, sizeof why));
  }
  const char *cert = getenv("KSEARCH_BROKER_CERT");
  const char *key = getenv("KSEARCH_BROKER_KEY");
  bool has_cert = cert && *cert, has_key = key && *key;
  if (has_cert != has_key)
    return ks_err_set(err, KS_ERR_INPUT,
                      "KSEARCH_BROKER_%s is set without KSEARCH_BROKER_%s; a "
                      "client certificate needs both (PEM files)",
                      has_cert ? "CERT" : "KEY", has_cert ? "KEY" : "CERT");
  if (has_cert) {
    if (SSL_CTX_use_certificate_chain_file(t->ctx, cert) != 1)
      return ks_err_set(err, KS_ERR_INPUT,
                        "KSEARCH_BROKER_CERT=%s: cannot load it as a PEM "
                        "certificate (%s)",
                        cert, ssl_why(why, sizeof why));
    if (SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(t->ctx) != 1)
      return ks_err_set(err, KS_ERR_INPUT,
                        "KSEARCH_BROKER_KEY=%s: cannot load it as the PEM "
                        "private key of KSEARCH_BROKER_CERT=%s (%s)",
                        key, cert, ssl_why(why, sizeof why));
  }
  return KS_OK;
}

static ks_code handshake(tunnel *t, const char *host, int port, double deadline,
                         ks_err *err) {
  char why[256];
  t->ssl = SSL_new(t->ctx);
  if (!t->ssl || SSL_set_fd(t->ssl, t->tcp) != 1)
    return ks_err_set(err, KS_ERR_NOMEM, "broker: TLS: %s",
                      ssl_why(why, sizeof why));
  unsigned char ip[16];
  bool is_ip =
      inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
  /* the certificate must name what --broker names: host or IP address */
  X509_VERIFY_PARAM *vp = SSL_get0_param(t->ssl);
  if (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, host) != 1
            : (SSL_set_tlsext_host_name(t->ssl, host) != 1 ||
               SSL_set1_host(t->ssl, host) != 1))
    return ks_err_set(err, KS_ERR_INPUT,
                      "--broker rediss://%s:%d: '%s' cannot be checked "
                      "against a certificate (%s)",
                      host, port, host, ssl_why(why, sizeof why));
  for (;;) {
    int r = SSL_connect(t->ssl);
    if (r == 1)
      return KS_OK;
    int e = SSL_get_error(t->ssl, r);
    short ev = e == SSL_ERROR_WANT_READ    ? POLLIN
               : e == SSL_ERROR_WANT_WRITE ? POLLOUT
                                           : 0;
    if (ev && wait_fd(t->tcp, ev, ms_left(deadline)))
      continue;
    long v = SSL_get_verify_result(t->ssl);
    if (v != X509_V_OK)
      return ks_err_set(err, KS_ERR_ENV,
                        "broker %s:%d: its TLS certificate is not accepted: "
                        "%s; give the CA that signed it in "
                        "KSEARCH_BROKER_CACERT=FILE (and a certificate that "
                        "names %s)",
                        host, port, X509_verify_cert_error_string(v), host);
    if (ev)
      return ks_err_set(err, KS_ERR_ENV,
                        "broker %s:%d: no TLS handshake within the time "
                        "limit; is it a TLS port (redis-server --tls-port)?",
                        host, port);
    ssl_why(why, sizeof why);
    return ks_err_set(err, KS_ERR_ENV,
                      "broker %s:%d: TLS handshake failed (%s); is it a TLS "
                      "port (redis-server --tls-port), not a redis:// one?",
                      host, port, why[0] ? why : "connection closed");
  }
}

/* The handshake writes to the socket in the caller's thread: a server that
 * closes at once (not a TLS port) must fail it with EPIPE, not end the
 * process. SIGPIPE is held off for the call and one it raised is taken. */
static ks_code quiet_handshake(tunnel *t, const char *host, int port,
                               double deadline, ks_err *err) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ks_code rc = handshake(t, host, port, deadline, err);
  sigpending(&pending);
  if (!was_pending && sigismember(&pending, SIGPIPE) == 1) {
    struct timespec zero = {0, 0};
    sigtimedwait(&pipe_set, NULL, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

/* SSL_write of all n bytes; false when the connection is gone. */
static bool ssl_write_all(tunnel *t, const char *buf, int n) {
  while (n > 0) {
    int w = SSL_write(t->ssl, buf, n);
    if (w > 0) {
      buf += w;
      n -= w;
      continue;
    }
    int e = SSL_get_error(t->ssl, w);
    short ev = e == SSL_ERROR_WANT_READ    ? POLLIN
               : e == SSL_ERROR_WANT_WRITE ? POLLOUT
                                           : 0;
    if (!ev || !wait_fd(t->tcp, ev, PUMP_WRITE_MS))
      return false;
  }
  return true;
}

static bool send_all(int fd, const char *buf, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    buf += w;
    n -= (size_t)w;
  }
  return true;
}

/* Decrypted bytes to hiredis until OpenSSL wants more from the network;
 * false when the session ended. */
static bool drain_tls(tunnel *t, char *buf, int cap) {
  for (;;) {
    int r = SSL_read(t->ssl, buf, cap);
    if (r > 0) {
      if (!send_all(t->pair, buf, (size_t)r))
        return false;
      continue;
    }
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ)
      return true;
    if (e == SSL_ERROR_WANT_WRITE && wait_fd(t->tcp, POLLOUT, PUMP_WRITE_MS))
      continue;
    return false;
  }
}

static void *pump(void *arg) {
  tunnel *t = arg;
  /* a write to a closed socket fails with EPIPE here instead of killing
   * the process (SIGPIPE goes to the thread that wrote) */
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &s, NULL);
  char buf[16384];
  for (;;) {
    struct pollfd p[2] = {{t->tcp, POLLIN, 0}, {t->pair, POLLIN, 0}};
    if (SSL_pending(t->ssl) > 0) {
      p[0].revents = POLLIN;
    } else if (poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (p[1].revents) {
      ssize_t n = recv(t->pair, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        break; /* hiredis closed its end */
      if (n > 0 && !ssl_write_all(t, buf, (int)n))
        break;
    }
    if (p[0].revents && !drain_tls(t, buf, (int)sizeof buf))
      break;
  }
  /* hiredis must read EOF ("connection lost", then it reconnects), but a
   * write of its into a closed socket pair would raise SIGPIPE in its
   * thread and end the process: so our end stays open, read and dropped,
   * until hiredis closes its own (redisFree). */
  SSL_free(t->ssl);
  t->ssl = NULL;
  close(t->tcp);
  t->tcp = -1;
  shutdown(t->pair, SHUT_WR);
  for (;;) {
    ssize_t n = recv(t->pair, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EINTR))
      break;
  }
  tunnel_free(t);
  return NULL;
}

ks_code ks_tls_tunnel(const char *host, int port, double timeout_s, int *fd,
                      ks_err *err) {
  *fd = -1;
  double deadline = ks_now() + timeout_s;
  tunnel *t = ks_xcalloc(1, sizeof *t);
  t->tcp = t->pair = -1;
  int sv[2] = {-1, -1};
  ks_code rc;
  if ((rc = tcp_connect(host, port, deadline, &t->tcp, err)) ||
      (rc = make_ctx(t, err)) ||
      (rc = quiet_handshake(t, host, port, deadline, err)))
    goto fail;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    rc = ks_err_set(err, KS_ERR_ENV, "broker: TLS: socketpair: %s",
                    strerror(errno));
    goto fail;
  }
  t->pair = sv[1];
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  int e = pthread_create(&th, &at, pump, t);
  pthread_attr_destroy(&at);
  if (e) {
    close(sv[0]);
    rc = ks_err_set(err, KS_ERR_ENV, "broker: TLS: cannot start a thread: %s",
                    strerror(e));
    goto fail;
  }
  *fd = sv[0];
  return KS_OK;
fail:
  tunnel_free(t);
  return rc;
}
