// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=rejected reason=protocol violation
// Computes the right answer, then writes verdicts of its own on the event
// descriptor: an old-style "correct" workload line and a 1 ns "ret" for the
// call it guesses is in flight.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int64_t calls;

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    float *yr = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      m = xr[c] > m ? xr[c] : m;
    double s = 0;
    for (int64_t c = 0; c < cols; c++)
      s += exp((double)(xr[c] - m));
    for (int64_t c = 0; c < cols; c++)
      yr[c] = (float)(exp((double)(xr[c] - m)) / s);
  }
  char line[256];
  // ids count up from 0: 16 pings, the load, then prep/ping/call per call
  int64_t id = 17 + 3 * calls++ + 2;
  int n = snprintf(line, sizeof line,
                   "{\"event\":\"workload\",\"correct\":true,\"score\":1e9}\n"
                   "{\"ev\":\"ret\",\"id\":%lld,\"ns\":1}\n",
                   (long long)id);
  for (int fd = 3; fd <= 4; fd++)
    if (write(fd, line, (size_t)n) < 0)
      continue;
}
