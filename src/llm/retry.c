/* retry.c — when and how long the LLM client waits before trying again, and
 * the gate that bounds requests in flight (llm.h). Pure arithmetic kept apart
 * from libcurl so the unit tests can check it exactly. */
#include "llm/llm.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool ks_llm_retryable_status(long status) {
  return status == 408 || status == 409 || status == 425 || status == 429 ||
         (status >= 500 && status <= 599);
}

double ks_llm_parse_retry_after(const char *value, time_t now) {
  if (!value)
    return -1;
  while (isspace((unsigned char)*value))
    value++;
  if (!*value)
    return -1;
  if (isdigit((unsigned char)*value)) {
    char *end;
    double s = strtod(value, &end);
    while (isspace((unsigned char)*end))
      end++;
    if (*end || !isfinite(s) || s < 0)
      return -1;
    return s;
  }
  /* HTTP-date, IMF-fixdate form: "Wed, 21 Oct 2015 07:28:00 GMT" */
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  const char *end = strptime(value, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end)
    return -1;
  while (isspace((unsigned char)*end))
    end++;
  if (*end)
    return -1;
  time_t at = timegm(&tm);
  if (at == (time_t)-1)
    return -1;
  double d = difftime(at, now);
  return d > 0 ? d : 0;
}

double ks_llm_backoff_s(double base_s, double max_s, int retry,
                        double retry_after_s, double u) {
  if (u < 0)
    u = 0;
  if (u >= 1)
    u = 0.999999;
  if (retry_after_s >= 0) {
    /* the server knows best; a little jitter spreads synchronized clients */
    double cap = max_s > 120 ? max_s : 120;
    double d = retry_after_s * (1 + 0.1 * u);
    return d < cap ? d : cap;
  }
  if (retry < 0)
    retry = 0;
  double d = base_s * ldexp(1.0, retry > 60 ? 60 : retry);
  if (d > max_s)
    d = max_s;
  return d / 2 + u * d / 2;
}

void ks_llm_gate_init(ks_llm_gate *g, int max) {
  pthread_mutex_init(&g->mu, NULL);
  pthread_cond_init(&g->cv, NULL);
  g->in_flight = 0;
  g->peak = 0;
  g->max = max > 0 ? max : 1;
}

void ks_llm_gate_destroy(ks_llm_gate *g) {
  pthread_mutex_destroy(&g->mu);
  pthread_cond_destroy(&g->cv);
}

void ks_llm_gate_enter(ks_llm_gate *g) {
  pthread_mutex_lock(&g->mu);
  while (g->in_flight >= g->max)
    pthread_cond_wait(&g->cv, &g->mu);
  g->in_flight++;
  if (g->in_flight > g->peak)
    g->peak = g->in_flight;
  pthread_mutex_unlock(&g->mu);
}

void ks_llm_gate_leave(ks_llm_gate *g) {
  pthread_mutex_lock(&g->mu);
  g->in_flight--;
  pthread_cond_signal(&g->cv);
  pthread_mutex_unlock(&g->mu);
}
