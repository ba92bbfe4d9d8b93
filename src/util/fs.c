/* fs.c — files and folders: whole-file reads, atomic writes, mkdir -p, the
 * cache folder and the executable's folder (used to find ksearch-runner and
 * the data tree). Atomic writes (temp + fsync + rename) are how the world
 * model and caches avoid half-written files after a crash (DESIGN.md: Store).
 */
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ks_code ks_read_file(const char *path, char **out, size_t *len, ks_err *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return ks_err_set(err, errno == ENOENT ? KS_ERR_INPUT : KS_ERR_IO,
                      "%s: cannot open: %s", path, strerror(errno));
  ks_buf b;
  ks_buf_init(&b);
  char tmp[65536];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
    ks_buf_append(&b, tmp, n);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    ks_buf_free(&b);
    return ks_err_set(err, KS_ERR_IO, "%s: read error", path);
  }
  if (!b.data)
    ks_buf_append(&b, "", 0);
  *out = b.data;
  if (len)
    *len = b.len;
  return KS_OK;
}

ks_code ks_write_file_atomic(const char *path, const void *data, size_t len,
                             ks_err *err) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return ks_err_set(err, KS_ERR_IO, "%s: cannot create: %s", tmp,
                      strerror(errno));
  const char *p = data;
  size_t left = len;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      int e = errno;
      close(fd);
      unlink(tmp);
      return ks_err_set(err, KS_ERR_IO, "%s: write failed: %s (disk full?)",
                        path, strerror(e));
    }
    p += w;
    left -= (size_t)w;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int e = errno;
    unlink(tmp);
    return ks_err_set(err, KS_ERR_IO, "%s: write failed: %s", path,
                      strerror(e));
  }
  if (rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return ks_err_set(err, KS_ERR_IO, "%s: cannot rename into place: %s", path,
                      strerror(e));
  }
  return KS_OK;
}

ks_code ks_mkdir_p(const char *path, ks_err *err) {
  char buf[PATH_MAX];
  ks_strlcpy(buf, path, sizeof buf);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
      return ks_err_set(err, KS_ERR_IO, "%s: cannot create folder: %s", buf,
                        strerror(errno));
    *p = '/';
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST)
    return ks_err_set(err, KS_ERR_IO, "%s: cannot create folder: %s", buf,
                      strerror(errno));
  return KS_OK;
}

bool ks_file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool ks_dir_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void ks_rm_rf(const char *path) {
  DIR *d = opendir(path);
  if (!d) {
    unlink(path);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    struct stat st;
    if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
      ks_rm_rf(sub);
    else
      unlink(sub);
  }
  closedir(d);
  rmdir(path);
}

ks_code ks_cache_dir(char *out, size_t n, ks_err *err) {
  const char *env = getenv("KSEARCH_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  if (env && *env)
    snprintf(out, n, "%s", env);
  else if (xdg && *xdg)
    snprintf(out, n, "%s/ksearch", xdg);
  else if (home && *home)
    snprintf(out, n, "%s/.cache/ksearch", home);
  else
    snprintf(out, n, "/tmp/ksearch-cache-%d", (int)getuid());
  ks_code rc = ks_mkdir_p(out, err);
  /* absolute, because the runner works in its own private folder */
  char abs_path[PATH_MAX];
  if (!rc && realpath(out, abs_path))
    ks_strlcpy(out, abs_path, n);
  return rc;
}

const char *ks_exe_dir(void) {
  static char dir[PATH_MAX]; /* computed once; same for the whole process */
  if (!dir[0]) {
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) {
      strcpy(dir, ".");
      return dir;
    }
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash)
      *slash = 0;
  }
  return dir;
}

const char *ks_runner_path(void) {
  static char path[PATH_MAX + 32]; /* resolved once per process */
  if (!path[0]) {
    const char *env = getenv("KSEARCH_RUNNER");
    if (env && *env)
      ks_strlcpy(path, env, sizeof path);
    else
      snprintf(path, sizeof path, "%s/ksearch-runner", ks_exe_dir());
  }
  return path;
}
