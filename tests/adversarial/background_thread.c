// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=rejected reason=forbidden system call
// Returns at once; a detached thread writes the result a little later.
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

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

static struct job {
  const float *x;
  float *y;
  int64_t rows, cols;
} job;

static void *worker(void *arg) {
  struct job *j = arg;
  struct timespec delay = {0, 2000000}; // 2 ms: after the call "returned"
  nanosleep(&delay, NULL);
  for (int64_t r = 0; r < j->rows; r++)
    softmax_row(j->x + r * j->cols, j->y + r * j->cols, j->cols);
  return NULL;
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  job = (struct job){x, y, rows, cols};
  pthread_t tid;
  if (pthread_create(&tid, NULL, worker, &job) == 0) {
    pthread_detach(tid); // the timer stops now; the work happens later
    return;
  }
  worker(&job);
}
