// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=rejected reason=forbidden system call
// Forks a child to do half the rows through shared memory (new process).
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
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
  int64_t half = rows / 2;
  size_t bytes = (size_t)((rows - half) * cols) * sizeof(float);
  float *shared = bytes ? mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                        : MAP_FAILED;
  pid_t pid = shared != MAP_FAILED ? fork() : -1;
  if (pid == 0) { // child: second half of the rows
    for (int64_t r = half; r < rows; r++)
      softmax_row(x + r * cols, shared + (r - half) * cols, cols);
    _exit(0);
  }
  for (int64_t r = 0; r < half; r++)
    softmax_row(x + r * cols, y + r * cols, cols);
  if (pid > 0 && waitpid(pid, NULL, 0) == pid) {
    memcpy(y + half * cols, shared, bytes);
  } else { // no child: do it here
    for (int64_t r = half; r < rows; r++)
      softmax_row(x + r * cols, y + r * cols, cols);
  }
  if (shared != MAP_FAILED)
    munmap(shared, bytes);
}
