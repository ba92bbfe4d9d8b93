/* precheck.c — see precheck.h. A hand-rolled scan (identifiers, strings,
 * comments, preprocessor lines) rather than a parser: it only has to find
 * names used as calls, and the sandbox stays the real guard. */
#include "llm/precheck.h"
#include "util/util.h"

#include <ctype.h>
#include <string.h>

typedef struct rule {
  const char *ident;
  const char *suggestion;
} rule;

#define NO_PROC "no processes in the sandbox; parallelize with OpenMP"
#define NO_EXEC "no programs can be run from a kernel"
#define NO_NET "no network in the sandbox"
#define NO_THREAD                                                              \
  "no threads of your own; use OpenMP (#pragma omp parallel for), whose pool " \
  "starts before the sandbox closes"
#define NO_FILE "no file writes; results go to the output buffers"
#define NO_SYS "no raw system calls or process control in a kernel"
#define NO_DL "no dynamic loading; everything is in this one file"
#define NO_EXIT "a kernel returns; it never ends the process"

static const rule k_calls[] = {
    {"fork", NO_PROC},
    {"vfork", NO_PROC},
    {"clone", NO_PROC},
    {"clone3", NO_PROC},
    {"posix_spawn", NO_PROC},
    {"posix_spawnp", NO_PROC},
    {"system", NO_EXEC},
    {"popen", NO_EXEC},
    {"execl", NO_EXEC},
    {"execlp", NO_EXEC},
    {"execle", NO_EXEC},
    {"execv", NO_EXEC},
    {"execvp", NO_EXEC},
    {"execvpe", NO_EXEC},
    {"execve", NO_EXEC},
    {"execveat", NO_EXEC},
    {"fexecve", NO_EXEC},
    {"socket", NO_NET},
    {"socketpair", NO_NET},
    {"connect", NO_NET},
    {"bind", NO_NET},
    {"listen", NO_NET},
    {"accept", NO_NET},
    {"accept4", NO_NET},
    {"getaddrinfo", NO_NET},
    {"gethostbyname", NO_NET},
    {"pthread_create", NO_THREAD},
    {"thrd_create", NO_THREAD},
    {"creat", NO_FILE},
    {"unlink", NO_FILE},
    {"remove", NO_FILE},
    {"rename", NO_FILE},
    {"mkdir", NO_FILE},
    {"truncate", NO_FILE},
    {"ftruncate", NO_FILE},
    {"syscall", NO_SYS},
    {"ptrace", NO_SYS},
    {"prctl", NO_SYS},
    {"setrlimit", NO_SYS},
    {"kill", NO_SYS},
    {"dlopen", NO_DL},
    {"dlsym", NO_DL},
    {"exit", NO_EXIT},
    {"_exit", NO_EXIT},
    {"_Exit", NO_EXIT},
    {"quick_exit", NO_EXIT},
    {NULL, NULL},
};

/* Keywords that are forbidden wherever they appear. */
static const char *const k_asm[] = {"asm", "__asm", "__asm__", NULL};
#define NO_ASM "no inline assembly; use intrinsics or GCC vector extensions"

typedef struct scan {
  const char *s;
  size_t i, n;
  int line;
} scan;

/* Skips whitespace, comments and (counting lines) newlines. */
static void skip_space(scan *sc) {
  while (sc->i < sc->n) {
    char c = sc->s[sc->i];
    if (c == '\n') {
      sc->line++;
      sc->i++;
    } else if (isspace((unsigned char)c)) {
      sc->i++;
    } else if (c == '/' && sc->i + 1 < sc->n && sc->s[sc->i + 1] == '/') {
      while (sc->i < sc->n && sc->s[sc->i] != '\n')
        sc->i++;
    } else if (c == '/' && sc->i + 1 < sc->n && sc->s[sc->i + 1] == '*') {
      sc->i += 2;
      while (sc->i + 1 < sc->n &&
             !(sc->s[sc->i] == '*' && sc->s[sc->i + 1] == '/')) {
        if (sc->s[sc->i] == '\n')
          sc->line++;
        sc->i++;
      }
      sc->i = sc->i + 2 < sc->n ? sc->i + 2 : sc->n;
    } else {
      return;
    }
  }
}

/* Skips a string or character literal starting at sc->i; returns its
 * content span. */
static void skip_literal(scan *sc, size_t *from, size_t *to) {
  char q = sc->s[sc->i++];
  *from = sc->i;
  while (sc->i < sc->n && sc->s[sc->i] != q && sc->s[sc->i] != '\n') {
    if (sc->s[sc->i] == '\\' && sc->i + 1 < sc->n)
      sc->i++;
    sc->i++;
  }
  *to = sc->i;
  if (sc->i < sc->n && sc->s[sc->i] == q)
    sc->i++;
}

static void add(ks_llm_violation *out, int max, int *n, int line,
                const char *ident, size_t len, const char *why) {
  if (*n < max) {
    ks_llm_violation *v = &out[*n];
    v->line = line;
    size_t l = len < sizeof v->ident - 1 ? len : sizeof v->ident - 1;
    memcpy(v->ident, ident, l);
    v->ident[l] = 0;
    ks_strlcpy(v->suggestion, why, sizeof v->suggestion);
  }
  (*n)++;
}

/* After `fopen(`: whether its mode (the second argument) may write. The
 * mode must be a literal without w, a or +. */
static bool fopen_writes(scan sc) {
  int depth = 0;
  bool second = false;
  while (sc.i < sc.n) {
    skip_space(&sc);
    if (sc.i >= sc.n)
      break;
    char c = sc.s[sc.i];
    if (c == '"' || c == '\'') {
      size_t a, b;
      skip_literal(&sc, &a, &b);
      if (second && c == '"') {
        for (size_t k = a; k < b; k++)
          if (sc.s[k] == 'w' || sc.s[k] == 'a' || sc.s[k] == '+')
            return true;
        return false;
      }
      continue;
    }
    if (c == '(')
      depth++;
    else if (c == ')') {
      if (depth-- == 0)
        return true; /* no literal mode found: cannot tell, refuse */
    } else if (c == ',' && depth == 0) {
      if (second)
        return true;
      second = true;
    } else if (second && !isspace((unsigned char)c)) {
      return true; /* a mode that is not a literal */
    }
    sc.i++;
  }
  return true;
}

ks_code ks_llm_precheck(const char *target, const char *source,
                        ks_llm_violation *out, int max, int *n_out,
                        ks_err *err) {
  (void)err;
  *n_out = 0;
  if (strcmp(target, "c") && strncmp(target, "c/", 2))
    return KS_OK;
  scan sc = {source, 0, strlen(source), 1};
  bool line_start = true;
  const char *prev_punct = "";
  while (sc.i < sc.n) {
    int line_before = sc.line;
    skip_space(&sc);
    if (sc.line != line_before)
      line_start = true;
    if (sc.i >= sc.n)
      break;
    char c = sc.s[sc.i];
    if (c == '#' && line_start) {
      size_t j = sc.i + 1;
      while (j < sc.n && (sc.s[j] == ' ' || sc.s[j] == '\t'))
        j++;
      if (!strncmp(sc.s + j, "include", 7)) {
        while (sc.i < sc.n && sc.s[sc.i] != '\n')
          sc.i++; /* a header name is not code */
        continue;
      }
    }
    line_start = false;
    if (c == '"' || c == '\'') {
      size_t a, b;
      skip_literal(&sc, &a, &b);
      prev_punct = "";
      continue;
    }
    if (isalpha((unsigned char)c) || c == '_') {
      size_t a = sc.i;
      while (sc.i < sc.n &&
             (isalnum((unsigned char)sc.s[sc.i]) || sc.s[sc.i] == '_'))
        sc.i++;
      const char *id = sc.s + a;
      size_t len = sc.i - a;
      bool member = !strcmp(prev_punct, ".") || !strcmp(prev_punct, "->");
      prev_punct = "";
      for (int k = 0; k_asm[k]; k++)
        if (strlen(k_asm[k]) == len && !strncmp(id, k_asm[k], len))
          add(out, max, n_out, sc.line, id, len, NO_ASM);
      scan look = sc;
      skip_space(&look);
      bool call = look.i < look.n && look.s[look.i] == '(';
      if (!call || member)
        continue;
      for (int k = 0; k_calls[k].ident; k++)
        if (strlen(k_calls[k].ident) == len &&
            !strncmp(id, k_calls[k].ident, len))
          add(out, max, n_out, sc.line, id, len, k_calls[k].suggestion);
      if ((len == 5 && !strncmp(id, "fopen", 5)) ||
          (len == 7 && !strncmp(id, "freopen", 7)) ||
          (len == 6 && !strncmp(id, "fdopen", 6))) {
        look.i++; /* past '(' */
        if (fopen_writes(look))
          add(out, max, n_out, sc.line, id, len,
              "opens a file for writing (mode with w, a or +, or not a "
              "literal); " NO_FILE);
      }
      continue;
    }
    if (isdigit((unsigned char)c)) {
      while (sc.i < sc.n &&
             (isalnum((unsigned char)sc.s[sc.i]) || sc.s[sc.i] == '.'))
        sc.i++;
      prev_punct = "";
      continue;
    }
    if (c == '-' && sc.i + 1 < sc.n && sc.s[sc.i + 1] == '>') {
      prev_punct = "->";
      sc.i += 2;
      continue;
    }
    prev_punct = c == '.' ? "." : "";
    sc.i++;
  }
  return KS_OK;
}
