/* test_tls.c — the TLS tunnel of rediss:// (src/dist/tls.c) against a TLS
 * echo server in this process (OpenSSL, a certificate for 127.0.0.1 made
 * with the openssl tool): bytes cross both ways, large writes arrive whole,
 * an end of the session reads as EOF and a write after it fails instead of
 * raising SIGPIPE; an untrusted certificate, a server that speaks no TLS and
 * half a client certificate are refused with the fix named. The whole path
 * through redis-server: tests/integration/workers_tls.sh. */
#include "dist/tls.h"
#include "util/util.h"

#include <criterion/criterion.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char tl_dir[256];

typedef struct server {
  int lfd, port;
  bool tls;      /* else: accept and close at once */
  size_t echo_n; /* echo this many bytes, then close */
  pthread_t th;
} server;

static void tl_setup(void) {
  snprintf(tl_dir, sizeof tl_dir, "/tmp/ks_tls_XXXXXX");
  cr_assert_not_null(mkdtemp(tl_dir));
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cd %s && openssl req -x509 -newkey ec -pkeyopt "
           "ec_paramgen_curve:prime256v1 -nodes -keyout key.pem -out "
           "cert.pem -days 1 -subj /CN=ks-test -addext "
           "subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
           tl_dir);
  cr_assert_eq(system(cmd), 0, "openssl could not make a certificate");
}

static void tl_teardown(void) { ks_rm_rf(tl_dir); }

TestSuite(tls, .init = tl_setup, .fini = tl_teardown, .timeout = 30);

static void *serve(void *arg) {
  server *sv = arg;
  int fd = accept(sv->lfd, NULL, NULL);
  if (fd < 0)
    return NULL;
  if (!sv->tls) {
    close(fd);
    return NULL;
  }
  char path[300];
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  snprintf(path, sizeof path, "%s/cert.pem", tl_dir);
  SSL_CTX_use_certificate_file(ctx, path, SSL_FILETYPE_PEM);
  snprintf(path, sizeof path, "%s/key.pem", tl_dir);
  SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_PEM);
  SSL *ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  if (SSL_accept(ssl) == 1) {
    char buf[4096];
    size_t done = 0;
    while (done < sv->echo_n) {
      int r = SSL_read(ssl, buf, sizeof buf);
      if (r <= 0)
        break;
      SSL_write(ssl, buf, r);
      done += (size_t)r;
    }
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  close(fd);
  return NULL;
}

static void start(server *sv, bool tls, size_t echo_n) {
  memset(sv, 0, sizeof *sv);
  sv->tls = tls;
  sv->echo_n = echo_n;
  sv->lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  cr_assert_eq(bind(sv->lfd, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(listen(sv->lfd, 1), 0);
  socklen_t l = sizeof a;
  getsockname(sv->lfd, (struct sockaddr *)&a, &l);
  sv->port = ntohs(a.sin_port);
  pthread_create(&sv->th, NULL, serve, sv);
}

static void stop(server *sv) {
  pthread_join(sv->th, NULL);
  close(sv->lfd);
}

static void trust_own_cert(void) {
  char ca[300];
  snprintf(ca, sizeof ca, "%s/cert.pem", tl_dir);
  setenv("KSEARCH_BROKER_CACERT", ca, 1);
  unsetenv("KSEARCH_BROKER_CERT");
  unsetenv("KSEARCH_BROKER_KEY");
}

static bool read_n(int fd, char *buf, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r <= 0)
      return false;
    got += (size_t)r;
  }
  return true;
}

Test(tls, carries_bytes_both_ways_then_reads_eof_without_sigpipe) {
  trust_own_cert();
  /* large enough for many TLS records and a full socket buffer */
  size_t n = 300000;
  server sv;
  start(&sv, true, n);
  int fd = -1;
  ks_err err = {0};
  cr_assert_eq(ks_tls_tunnel("127.0.0.1", sv.port, 5, &fd, &err), KS_OK, "%s",
               err.msg);
  char *out = malloc(n), *back = malloc(n);
  for (size_t i = 0; i < n; i++)
    out[i] = (char)(i * 7 + 3);
  /* write in pieces while reading, as a client of a request/reply protocol */
  size_t sent = 0, got = 0;
  while (got < n) {
    if (sent < n) {
      size_t k = n - sent < 8192 ? n - sent : 8192;
      cr_assert_eq(write(fd, out + sent, k), (ssize_t)k);
      sent += k;
    }
    size_t want = sent - got;
    cr_assert(read_n(fd, back + got, want), "echo stopped at %zu", got);
    got += want;
  }
  cr_assert_eq(memcmp(out, back, n), 0, "bytes changed in the tunnel");
  stop(&sv); /* the server closed the session after n bytes */
  char c;
  cr_assert_eq(read(fd, &c, 1), 0, "the end of the session reads as EOF");
  /* hiredis may still write a command: that must fail, not kill us */
  signal(SIGPIPE, SIG_DFL);
  ssize_t w = write(fd, "PING\r\n", 6);
  cr_assert_eq(w, 6, "a write after the end is taken and dropped (got %zd)", w);
  close(fd);
  free(out);
  free(back);
}

Test(tls, untrusted_certificate_names_the_ca_variable) {
  unsetenv("KSEARCH_BROKER_CERT");
  unsetenv("KSEARCH_BROKER_KEY");
  /* a CA file that is not the server's own certificate */
  char cmd[600], ca[300];
  snprintf(cmd, sizeof cmd,
           "cd %s && openssl req -x509 -newkey ec -pkeyopt "
           "ec_paramgen_curve:prime256v1 -nodes -keyout o.key -out o.pem "
           "-days 1 -subj /CN=other >/dev/null 2>&1",
           tl_dir);
  cr_assert_eq(system(cmd), 0);
  snprintf(ca, sizeof ca, "%s/o.pem", tl_dir);
  setenv("KSEARCH_BROKER_CACERT", ca, 1);
  server sv;
  start(&sv, true, 0);
  int fd = -1;
  ks_err err = {0};
  ks_code rc = ks_tls_tunnel("127.0.0.1", sv.port, 5, &fd, &err);
  stop(&sv);
  cr_assert_eq(rc, KS_ERR_ENV, "%s", err.msg);
  cr_assert_eq(fd, -1);
  cr_assert(strstr(err.msg, "certificate is not accepted") &&
                strstr(err.msg, "KSEARCH_BROKER_CACERT"),
            "%s", err.msg);
}

Test(tls, server_without_tls_is_a_failed_handshake) {
  trust_own_cert();
  server sv;
  start(&sv, false, 0);
  int fd = -1;
  ks_err err = {0};
  ks_code rc = ks_tls_tunnel("127.0.0.1", sv.port, 5, &fd, &err);
  stop(&sv);
  cr_assert_eq(rc, KS_ERR_ENV, "%s", err.msg);
  cr_assert(strstr(err.msg, "TLS handshake failed") &&
                strstr(err.msg, "--tls-port"),
            "%s", err.msg);
}

Test(tls, half_a_client_certificate_is_bad_input) {
  trust_own_cert();
  char cert[300];
  snprintf(cert, sizeof cert, "%s/cert.pem", tl_dir);
  setenv("KSEARCH_BROKER_CERT", cert, 1);
  server sv;
  start(&sv, false, 0);
  int fd = -1;
  ks_err err = {0};
  ks_code rc = ks_tls_tunnel("127.0.0.1", sv.port, 5, &fd, &err);
  stop(&sv);
  cr_assert_eq(rc, KS_ERR_INPUT, "%s", err.msg);
  cr_assert(strstr(err.msg, "KSEARCH_BROKER_KEY"), "%s", err.msg);
}

Test(tls, unreachable_port_says_what_to_start) {
  trust_own_cert();
  server sv;
  start(&sv, false, 0);
  int port = sv.port;
  /* connect once so the thread ends, then nothing listens on the port */
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  cr_assert_eq(connect(s, (struct sockaddr *)&a, sizeof a), 0);
  close(s);
  stop(&sv);
  int fd = -1;
  ks_err err = {0};
  ks_code rc = ks_tls_tunnel("127.0.0.1", port, 5, &fd, &err);
  cr_assert_eq(rc, KS_ERR_ENV, "%s", err.msg);
  cr_assert(strstr(err.msg, "cannot reach the broker") &&
                strstr(err.msg, "--tls-port"),
            "%s", err.msg);
}
