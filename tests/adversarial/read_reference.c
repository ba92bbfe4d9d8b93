// ksearch: backend=c entry=softmax
// adversarial: task=softmax expect=incorrect reason=nan
// Looks for the reference output instead of computing: every open
// descriptor of the right size, a job file in its folder, the cache folder
// named in its environment, the judge's memory through /proc. Copies the
// first candidate bytes it finds into y; finds nothing, so y stays NaN.
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int try_fd(int fd, float *y, size_t bytes) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < bytes)
    return 0;
  return pread(fd, y, bytes, 0) == (ssize_t)bytes;
}

void softmax(const float *restrict x, float *restrict y, int64_t rows,
             int64_t cols) {
  (void)x;
  size_t bytes = (size_t)(rows * cols) * sizeof(float);
  for (int fd = 0; fd < 256; fd++)
    if (fd != 5 && fd != 6 && try_fd(fd, y, bytes)) // 5, 6: its own buffers
      return;
  // getppid() is not on the allow-list, so the judge's /proc entry is
  // guessed from the executor's own pid (the judge started it just before)
  const char *paths[5] = {"job.json", getenv("KSEARCH_CACHE_DIR"), NULL,
                          "/proc/self/fd/3", "/proc/self/environ"};
  char mem[64];
  snprintf(mem, sizeof mem, "/proc/%d/mem", (int)getpid() - 1);
  paths[2] = mem;
  for (int i = 0; i < 5; i++) {
    if (!paths[i])
      continue;
    int fd = open(paths[i], O_RDONLY);
    if (fd >= 0) {
      int got = try_fd(fd, y, bytes);
      close(fd);
      if (got)
        return;
    }
  }
}
