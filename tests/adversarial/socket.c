// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=rejected reason=forbidden system call
// Opens a TCP socket to report the shape, then computes correctly.
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static void softmax_row(const float *xr, float *yr, int64_t cols) {
  float m = -INFINITY;
  for (int64_t c = 0; c < cols; c++)
    m = xr[c] > m ? xr[c] : m;
  double sum = 0.0;
  for (int64_t c = 0; c < cols; c++)
    sum += exp((double)(xr[c] - m));
  for (int64_t c = 0; c < cols; c++)
    yr[c] = (float)(exp((double)(xr[c] - m)) / sum);
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0) {
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(9); // discard service on localhost
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
      char msg[64];
      int len = snprintf(msg, sizeof msg, "%lld %lld\n", (long long)rows,
                         (long long)cols);
      (void)!write(fd, msg, (size_t)len);
    }
    close(fd);
  }
  for (int64_t r = 0; r < rows; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
}
