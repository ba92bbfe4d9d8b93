/* test_llm_precheck.c — the first version of the primitive check
 * (src/llm/precheck.c): forbidden calls found with their lines, nothing
 * found in comments, strings, #include lines, member calls or plain
 * variables; fopen only when it may write. */
#include "llm/precheck.h"

#include <criterion/criterion.h>
#include <string.h>

static int check(const char *src, ks_llm_violation *v) {
  int n = -1;
  ks_err err;
  cr_assert_eq(ks_llm_precheck("c", src, v, 16, &n, &err), KS_OK);
  return n;
}

Test(llm_precheck, finds_forbidden_calls_with_lines) {
  ks_llm_violation v[16];
  const char *src = "#include <stdlib.h>\n"
                    "void f(void) {\n"
                    "  system(\"ls\");\n"
                    "  int p = fork ();\n"
                    "  pthread_create(0, 0, 0, 0);\n"
                    "  execvp(\"x\", 0);\n"
                    "  __asm__ volatile(\"nop\");\n"
                    "}\n";
  int n = check(src, v);
  cr_assert_eq(n, 5);
  cr_assert_str_eq(v[0].ident, "system");
  cr_assert_eq(v[0].line, 3);
  cr_assert_str_eq(v[1].ident, "fork");
  cr_assert_eq(v[1].line, 4);
  cr_assert_str_eq(v[2].ident, "pthread_create");
  cr_assert(strstr(v[2].suggestion, "OpenMP"));
  cr_assert_str_eq(v[3].ident, "execvp");
  cr_assert_str_eq(v[4].ident, "__asm__");
  cr_assert_eq(v[4].line, 7);
}

Test(llm_precheck, ignores_comments_strings_includes_members_variables) {
  ks_llm_violation v[16];
  const char *src = "#include <sys/socket.h>\n"
                    "// we never fork() or system()\n"
                    "/* socket(AF_INET) in a comment\n   fork() */\n"
                    "static const char *s = \"system(1); fork()\";\n"
                    "struct ops { int (*kill)(int); } o;\n"
                    "int g(int system) { return o.kill(system) + "
                    "(&o)->kill(1); }\n";
  cr_assert_eq(check(src, v), 0, "%s", v[0].ident);
}

Test(llm_precheck, fopen_only_when_it_may_write) {
  ks_llm_violation v[16];
  cr_assert_eq(check("void f(void){ fopen(\"/proc/cpuinfo\", \"r\"); }", v), 0);
  cr_assert_eq(check("void f(void){ fopen(name(\"a,b\"), \"rb\"); }", v), 0);
  cr_assert_eq(check("void f(void){ fopen(\"out.txt\", \"w\"); }", v), 1);
  cr_assert_str_eq(v[0].ident, "fopen");
  cr_assert_eq(check("void f(void){ fopen(\"o\", \"r+\"); }", v), 1);
  cr_assert_eq(check("void f(const char *m){ fopen(\"o\", m); }", v), 1);
}

Test(llm_precheck, counts_beyond_max_and_skips_other_targets) {
  ks_llm_violation v[2];
  int n = 0;
  ks_err err;
  const char *src = "void f(void){ fork(); fork(); fork(); }";
  cr_assert_eq(ks_llm_precheck("c", src, v, 2, &n, &err), KS_OK);
  cr_assert_eq(n, 3);
  cr_assert_eq(ks_llm_precheck("opencl", src, v, 2, &n, &err), KS_OK);
  cr_assert_eq(n, 0);
}
