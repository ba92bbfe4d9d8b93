/* test_candidate.c — the `// ksearch:` header of candidate files
 * (src/eval/candidate.c): backend, entry, params, launch; the errors a kernel
 * author sees; --param validation; defaults; canonical params JSON; hashes. */
#include "eval/candidate.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const ca_src =
    "// ksearch: backend=opencl entry=my_kernel task=softmax expect=pass\n"
    "// ksearch: param VEC in 4, 8,16\n"
    "  // ksearch: param ROWS_PER_THREAD in 1,2,4\n"
    "// ksearch: launch global=(rows*LOCAL) local=(LOCAL)\n"
    "// an ordinary comment: ksearch: param NOPE in 1\n"
    "__kernel void my_kernel(__global const float *x) {}\n";

static void ca_parse_ok(const char *src, const char *def, ks_candidate *c) {
  ks_err err = {0};
  cr_assert_eq(ks_candidate_parse(src, "k.cl", def, c, &err), KS_OK, "%s",
               err.msg);
}

static void ca_parse_bad(const char *src, ks_err *err) {
  ks_candidate c;
  memset(err, 0, sizeof *err);
  cr_assert_eq(ks_candidate_parse(src, "bad.c", "dflt", &c, err), KS_ERR_INPUT,
               "parsed: %s", src);
  cr_assert_eq(err->code, KS_ERR_INPUT);
  cr_assert(strstr(err->msg, "bad.c") != NULL, "names the file: %s", err->msg);
  cr_assert_null(c.source, "freed on failure");
}

Test(candidate, header_fields) {
  ks_candidate c;
  ca_parse_ok(ca_src, "softmax", &c);
  cr_expect_str_eq(c.path, "k.cl");
  cr_expect_str_eq(c.backend, "opencl");
  cr_expect_str_eq(c.entry, "my_kernel", "header entry beats the default");
  cr_expect_str_eq(c.launch, "global=(rows*LOCAL) local=(LOCAL)");
  cr_expect_str_eq(c.source, ca_src);
  cr_assert_eq(c.n_decls, 2, "only `// ksearch:` lines count");
  cr_expect_str_eq(c.decls[0].name, "VEC");
  cr_assert_eq(c.decls[0].n_values, 3);
  cr_expect_str_eq(c.decls[0].values[0], "4");
  cr_expect_str_eq(c.decls[0].values[1], "8");
  cr_expect_str_eq(c.decls[0].values[2], "16");
  cr_expect_str_eq(c.decls[1].name, "ROWS_PER_THREAD");
  cr_expect_eq(c.decls[1].n_values, 3);
  cr_expect_eq(c.n_set, 0);
  cr_expect_null(ks_candidate_param(&c, "VEC"));
  ks_candidate_free(&c);
  cr_expect_null(c.source);
}

Test(candidate, defaults_backend_c_and_default_entry) {
  ks_candidate c;
  ks_err err = {0};
  cr_assert_eq(
      ks_candidate_parse("void rmsnorm(void) {}\n", NULL, "rmsnorm", &c, &err),
      KS_OK, "%s", err.msg);
  cr_expect_str_eq(c.backend, "c");
  cr_expect_str_eq(c.entry, "rmsnorm");
  cr_expect_str_eq(c.path, "<memory>");
  cr_expect_eq(c.launch[0], 0);
  cr_expect_eq(c.n_decls, 0);
  ks_candidate_free(&c);
}

Test(candidate, header_without_trailing_newline) {
  ks_candidate c;
  ca_parse_ok("// ksearch: backend=cuda entry=k", NULL, &c);
  cr_expect_str_eq(c.backend, "cuda");
  cr_expect_str_eq(c.entry, "k");
  ks_candidate_free(&c);
}

Test(candidate, header_with_crlf_line_ends) {
  ks_candidate c;
  ca_parse_ok("// ksearch: backend=c entry=k\r\n"
              "// ksearch: param V in 1,2\r\n",
              NULL, &c);
  cr_expect_str_eq(c.entry, "k");
  cr_assert_eq(c.n_decls, 1);
  cr_expect_str_eq(c.decls[0].values[1], "2");
  ks_candidate_free(&c);
}

Test(candidate, unknown_keys_ignored) {
  ks_candidate c;
  ca_parse_ok("// ksearch: entry=k task=rmsnorm expect=reject reason=x\n"
              "// ksearch: author=me\n",
              NULL, &c);
  cr_expect_str_eq(c.entry, "k");
  cr_expect_str_eq(c.backend, "c");
  ks_candidate_free(&c);
}

Test(candidate, missing_entry) {
  ks_candidate c;
  ks_err err = {0};
  cr_assert_eq(ks_candidate_parse("// ksearch: backend=c\nvoid f(void){}\n",
                                  "nokey.c", NULL, &c, &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "nokey.c") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "entry=NAME") != NULL, "says the fix: %s", err.msg);
  cr_expect_null(c.source);
}

Test(candidate, entry_must_be_identifier) {
  ks_err err;
  ca_parse_bad("// ksearch: entry=my-kernel\n", &err);
  cr_expect(strstr(err.msg, "my-kernel") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "C identifier") != NULL, "%s", err.msg);
  ca_parse_bad("// ksearch: entry=\n", &err);
  cr_expect(strstr(err.msg, "C identifier") != NULL, "%s", err.msg);
}

Test(candidate, error_line_numbers) {
  ks_err err;
  ca_parse_bad("int x;\n\n// ksearch: bogus\n", &err);
  cr_expect(strstr(err.msg, "bad.c:3") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "bogus") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "key=value") != NULL, "%s", err.msg);
}

Test(candidate, duplicate_param) {
  ks_err err;
  ca_parse_bad("// ksearch: param VEC in 1,2\n// ksearch: param VEC in 4\n",
               &err);
  cr_expect(strstr(err.msg, "bad.c:2") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "VEC") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "twice") != NULL, "%s", err.msg);
}

Test(candidate, empty_values) {
  ks_err err;
  ca_parse_bad("// ksearch: param VEC in , ,\n", &err);
  cr_expect(strstr(err.msg, "VEC") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "is empty") != NULL, "%s", err.msg);
  ca_parse_bad("// ksearch: param VEC in\n", &err);
  cr_expect(strstr(err.msg, "VEC has no values") != NULL, "%s", err.msg);
  ca_parse_bad("// ksearch: param VEC 1,2\n", &err);
  cr_expect(strstr(err.msg, "param NAME in") != NULL, "%s", err.msg);
}

/* issue 13: "8,,16" used to be read as 8,16; an empty value is a typo */
Test(candidate, empty_values_between_commas_refused) {
  ks_err err;
  ca_parse_bad("// ksearch: entry=k\n// ksearch: param T in 1,,2\n", &err);
  cr_expect(strstr(err.msg, "bad.c:2") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "is empty") != NULL, "%s", err.msg);
  ca_parse_bad("// ksearch: entry=k\n// ksearch: param T in 1,2,\n", &err);
  cr_expect(strstr(err.msg, "is empty") != NULL, "%s", err.msg);
}

/* issue 13: header values reached the compiler as -D values unchecked; they
 * now pass the rule --param applies (ks_param_value_check) */
Test(candidate, header_values_follow_the_param_rule) {
  static const char *const bad[] = {"$(id)", "`id`", "a\"b", "x'y",  "f(1)",
                                    "1;2",   "a b",  "\xff", "a\\b", "1/2"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char src[128];
    snprintf(src, sizeof src,
             "// ksearch: entry=k\n// ksearch: param P in %s\n", bad[i]);
    ks_err err;
    ca_parse_bad(src, &err);
    cr_expect(strstr(err.msg, "short tokens") != NULL, "%s: %s", bad[i],
              err.msg);
    /* the same value is refused on the command line, by the same rule */
    ks_candidate c;
    ca_parse_ok("// ksearch: entry=k\n", NULL, &c);
    cr_expect_eq(ks_candidate_set_param(&c, "P", bad[i], &err), KS_ERR_INPUT,
                 "--param P=%s", bad[i]);
    ks_candidate_free(&c);
  }
  ks_candidate c;
  ca_parse_ok("// ksearch: entry=k\n// ksearch: param P in -1,0.5,1e-3,A_B\n",
              NULL, &c);
  cr_expect_eq(c.decls[0].n_values, 4);
  ks_candidate_free(&c);
}

Test(candidate, header_key_must_be_a_word) {
  ks_err err;
  ca_parse_bad("// ksearch: =\n", &err);
  cr_expect(strstr(err.msg, "key") != NULL, "%s", err.msg);
  ca_parse_bad("// ksearch: entry=k =x\n", &err);
  ca_parse_bad("// ksearch: $(id)=1\n", &err);
}

Test(candidate, nul_byte_in_file_is_refused_with_its_line) {
  char path[] = "/tmp/ks_cand_nul_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  static const char text[] = "// ksearch: entry=k\nvoid k(void) {}\n\0int x;\n";
  cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fd);
  ks_candidate c;
  ks_err err = {0};
  cr_assert_eq(ks_candidate_load(path, NULL, &c, &err), KS_ERR_INPUT);
  unlink(path);
  cr_expect(strstr(err.msg, ":3: NUL byte") != NULL, "%s", err.msg);
}

Test(candidate, duplicate_values) {
  ks_err err;
  ca_parse_bad("// ksearch: param VEC in 4,8,4\n", &err);
  cr_expect(strstr(err.msg, "VEC") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "4 twice") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "once") != NULL, "%s", err.msg);
}

Test(candidate, param_name_must_be_identifier) {
  ks_err err;
  ca_parse_bad("// ksearch: param 2VEC in 1,2\n", &err);
  cr_expect(strstr(err.msg, "2VEC") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "C identifier") != NULL, "%s", err.msg);
}

Test(candidate, param_too_many_values_or_too_long) {
  ks_err err;
  char src[512] = "// ksearch: param P in ";
  for (int i = 0; i < KS_MAX_PARAM_VALUES + 1; i++) {
    char v[8];
    snprintf(v, sizeof v, "%s%d", i ? "," : "", i);
    strcat(src, v);
  }
  ca_parse_bad(src, &err);
  ca_parse_bad("// ksearch: param P in "
               "abcdefghijabcdefghijabcdefghijabcdefghij\n",
               &err);
  cr_expect(strstr(err.msg, "31 characters") != NULL, "%s", err.msg);
}

Test(candidate, set_param_declared_values_only) {
  ks_candidate c;
  ca_parse_ok(ca_src, NULL, &c);
  ks_err err = {0};
  cr_expect_eq(ks_candidate_set_param(&c, "VEC", "8", &err), KS_OK);
  cr_expect_str_eq(ks_candidate_param(&c, "VEC"), "8");
  cr_assert_eq(ks_candidate_set_param(&c, "VEC", "5", &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "4,8,16") != NULL, "lists allowed values: %s",
            err.msg);
  cr_expect(strstr(err.msg, "VEC=5") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "k.cl") != NULL, "%s", err.msg);
  cr_expect_str_eq(ks_candidate_param(&c, "VEC"), "8", "unchanged");
  cr_expect_eq(ks_candidate_set_param(&c, "VEC", "16", &err), KS_OK);
  cr_expect_str_eq(ks_candidate_param(&c, "VEC"), "16", "overwrites");
  cr_expect_eq(c.n_set, 1);
  /* undeclared: a plain macro */
  cr_expect_eq(ks_candidate_set_param(&c, "UNROLL", "3", &err), KS_OK);
  cr_expect_str_eq(ks_candidate_param(&c, "UNROLL"), "3");
  ks_candidate_free(&c);
}

Test(candidate, set_param_rejects_unsafe_tokens) {
  ks_candidate c;
  ca_parse_ok(ca_src, NULL, &c);
  ks_err err = {0};
  cr_expect_eq(ks_candidate_set_param(&c, "X", "1; rm -rf /", &err),
               KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "short tokens") != NULL, "%s", err.msg);
  cr_expect_eq(ks_candidate_set_param(&c, "X", "$(id)", &err), KS_ERR_INPUT);
  cr_expect_eq(ks_candidate_set_param(&c, "X", "a\"b", &err), KS_ERR_INPUT);
  cr_expect_eq(ks_candidate_set_param(&c, "9X", "1", &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "C identifier") != NULL, "%s", err.msg);
  cr_expect_eq(ks_candidate_set_param(&c, "A-B", "1", &err), KS_ERR_INPUT);
  cr_expect_eq(c.n_set, 0);
  ks_candidate_free(&c);
}

Test(candidate, fill_defaults) {
  ks_candidate c;
  ca_parse_ok(ca_src, NULL, &c);
  ks_err err = {0};
  cr_assert_eq(ks_candidate_set_param(&c, "VEC", "16", &err), KS_OK);
  ks_candidate_fill_defaults(&c);
  cr_expect_str_eq(ks_candidate_param(&c, "VEC"), "16", "kept");
  cr_expect_str_eq(ks_candidate_param(&c, "ROWS_PER_THREAD"), "1",
                   "first declared value");
  cr_expect_eq(c.n_set, 2);
  ks_candidate_fill_defaults(&c);
  cr_expect_eq(c.n_set, 2, "idempotent");
  ks_candidate_free(&c);
}

Test(candidate, params_json_sorted) {
  ks_candidate c;
  ca_parse_ok("// ksearch: entry=k\n", NULL, &c);
  char *empty = ks_candidate_params_json(&c);
  cr_expect_str_eq(empty, "{}");
  free(empty);
  ks_err err = {0};
  cr_assert_eq(ks_candidate_set_param(&c, "ZED", "1", &err), KS_OK);
  cr_assert_eq(ks_candidate_set_param(&c, "ALPHA", "2", &err), KS_OK);
  cr_assert_eq(ks_candidate_set_param(&c, "MID", "x3", &err), KS_OK);
  char *j = ks_candidate_params_json(&c);
  cr_expect_str_eq(j, "{\"ALPHA\":\"2\",\"MID\":\"x3\",\"ZED\":\"1\"}");
  free(j);
  ks_candidate_free(&c);
}

Test(candidate, params_json_order_independent_hash) {
  ks_candidate a, b;
  ca_parse_ok(ca_src, NULL, &a);
  ca_parse_ok(ca_src, NULL, &b);
  ks_err err = {0};
  ks_candidate_set_param(&a, "VEC", "8", &err);
  ks_candidate_set_param(&a, "ROWS_PER_THREAD", "2", &err);
  ks_candidate_set_param(&b, "ROWS_PER_THREAD", "2", &err);
  ks_candidate_set_param(&b, "VEC", "8", &err);
  char *ja = ks_candidate_params_json(&a), *jb = ks_candidate_params_json(&b);
  cr_expect_str_eq(ja, jb);
  cr_expect_eq(ks_candidate_hash(&a), ks_candidate_hash(&b));
  free(ja);
  free(jb);
  ks_candidate_free(&a);
  ks_candidate_free(&b);
}

Test(candidate, hash_changes_with_params_and_source) {
  ks_candidate a, b;
  ca_parse_ok(ca_src, NULL, &a);
  uint64_t h0 = ks_candidate_hash(&a);
  cr_expect_eq(h0, ks_candidate_hash(&a), "stable");
  ks_err err = {0};
  ks_candidate_set_param(&a, "VEC", "8", &err);
  uint64_t h8 = ks_candidate_hash(&a);
  cr_expect_neq(h0, h8);
  ks_candidate_set_param(&a, "VEC", "16", &err);
  uint64_t h16 = ks_candidate_hash(&a);
  cr_expect_neq(h8, h16);

  char *src2 = malloc(strlen(ca_src) + 8);
  strcpy(src2, ca_src);
  strcat(src2, "// x\n");
  ca_parse_ok(src2, NULL, &b);
  ks_candidate_set_param(&b, "VEC", "16", &err);
  cr_expect_neq(ks_candidate_hash(&b), h16, "source is part of the hash");
  free(src2);
  ks_candidate_free(&a);
  ks_candidate_free(&b);
}

Test(candidate, load_from_file) {
  const char *t = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/ks_cand_XXXXXX.c", t && *t ? t : "/tmp");
  int fd = mkstemps(path, 2);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, ca_src, strlen(ca_src)), (ssize_t)strlen(ca_src));
  close(fd);
  ks_candidate c;
  ks_err err = {0};
  ks_code rc = ks_candidate_load(path, NULL, &c, &err);
  unlink(path);
  cr_assert_eq(rc, KS_OK, "%s", err.msg);
  cr_expect_str_eq(c.path, path);
  cr_expect_str_eq(c.entry, "my_kernel");
  cr_expect_str_eq(c.source, ca_src);
  ks_candidate_free(&c);
  cr_expect_neq(ks_candidate_load("/nonexistent/ks_cand.c", NULL, &c, &err),
                KS_OK);
  cr_expect(strstr(err.msg, "/nonexistent/ks_cand.c") != NULL, "%s", err.msg);
}
