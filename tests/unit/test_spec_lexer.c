/* test_spec_lexer.c — the C-family tokenizer of src/spec/lexer.c: comments,
 * strings, character literals and preprocessor lines handled; line
 * numbers; bracket matching; the errors malformed input gets. */
#include "spec/lexer.h"

#include <criterion/criterion.h>
#include <string.h>

static int lx_find(const ks_toks *ts, const char *text) {
  for (int i = 0; i < ts->n; i++)
    if (ks_tok_is(ts, i, text))
      return i;
  return -1;
}

Test(spec_lexer, comments_strings_and_chars_are_single_tokens) {
  const char *src = "a /* threadIdx */ \"__syncthreads()\" '\\'' // x\n"
                    "u8\"s\" L'c' R\"d(raw \" quote)d\" f";
  ks_toks ts;
  ks_err err = {0};
  cr_assert_eq(ks_lex(src, &ts, &err), KS_OK, "%s", err.msg);
  cr_expect_eq(lx_find(&ts, "threadIdx"), -1, "comment text is no token");
  cr_expect_eq(lx_find(&ts, "__syncthreads"), -1, "string text is no token");
  int kinds[16], n = 0;
  for (int i = 0; i < ts.n && n < 16; i++)
    kinds[n++] = ts.t[i].kind;
  cr_assert_eq(n, 7, "a, string, char, u8 string, L char, raw string, f");
  cr_expect_eq(kinds[0], KS_TOK_IDENT);
  cr_expect_eq(kinds[1], KS_TOK_STRING);
  cr_expect_eq(kinds[2], KS_TOK_CHAR);
  cr_expect_eq(kinds[3], KS_TOK_STRING);
  cr_expect_eq(kinds[4], KS_TOK_CHAR);
  cr_expect_eq(kinds[5], KS_TOK_STRING);
  cr_expect(ks_tok_is(&ts, 6, "f"));
  cr_expect_eq(ts.t[6].line, 2);
  ks_toks_free(&ts);
}

Test(spec_lexer, preprocessor_lines) {
  const char *src =
      "#include <cuda_fp16.h>\n"
      "  #  pragma unroll 4\n"
      "#define WARP_SUM(v) \\\n  __shfl_xor_sync(0xffffffff, v, 1)\n"
      "int x;\n";
  ks_toks ts;
  ks_err err = {0};
  cr_assert_eq(ks_lex(src, &ts, &err), KS_OK, "%s", err.msg);
  cr_assert_eq(ts.t[0].kind, KS_TOK_PP);
  cr_expect_eq(ts.t[1].kind, KS_TOK_HEADER);
  cr_expect(ks_tok_is(&ts, 1, "<cuda_fp16.h>"));
  cr_expect_eq(ts.t[2].kind, KS_TOK_PP_END);
  int pr = lx_find(&ts, "unroll");
  cr_assert_geq(pr, 0);
  cr_expect(ts.t[pr].in_pp);
  cr_expect_eq(ts.t[pr - 1].kind, KS_TOK_PP, "# pragma with blanks");
  int sh = lx_find(&ts, "__shfl_xor_sync");
  cr_assert_geq(sh, 0);
  cr_expect(ts.t[sh].in_pp, "a spliced #define line stays one directive");
  cr_expect_eq(ts.t[sh].line, 4);
  int x = lx_find(&ts, "x");
  cr_expect(!ts.t[x].in_pp);
  cr_expect_eq(ts.t[x].line, 5);
  cr_expect_eq(ks_tok_next(&ts, lx_find(&ts, "int")), x);
  ks_toks_free(&ts);
}

Test(spec_lexer, punctuators_and_brackets) {
  const char *src = "k<<<grid, block>>>(a[b[0]], (c));\nx >>= 1; p->q::r";
  ks_toks ts;
  ks_err err = {0};
  cr_assert_eq(ks_lex(src, &ts, &err), KS_OK, "%s", err.msg);
  cr_expect_geq(lx_find(&ts, "<<<"), 0);
  cr_expect_geq(lx_find(&ts, ">>>"), 0);
  cr_expect_geq(lx_find(&ts, ">>="), 0);
  cr_expect_geq(lx_find(&ts, "->"), 0);
  cr_expect_geq(lx_find(&ts, "::"), 0);
  int lp = lx_find(&ts, "(");
  cr_assert_geq(lp, 0);
  cr_expect(ks_tok_is(&ts, ts.t[lp].match + 1, ";"), "( matches its )");
  int lb = lx_find(&ts, "[");
  cr_expect(ks_tok_is(&ts, ts.t[lb].match + 1, ","), "nested [ ] match");
  cr_expect_eq(ts.unbalanced_line, 0);
  ks_toks_free(&ts);
  cr_assert_eq(ks_lex("void f() {\n  if (x) {\n}\n", &ts, &err), KS_OK);
  cr_expect_eq(ts.unbalanced_line, 1, "the unclosed { of line 1");
  ks_toks_free(&ts);
}

Test(spec_lexer, each_branch_of_a_conditional_starts_from_its_if) {
  /* a loop header written once per branch (wgmma_flash's OVERLAP) is one
   * open brace, as the compiler sees one branch; the closing brace after
   * #endif matches the first branch's */
  ks_toks ts;
  ks_err err = {0};
  const char *src = "void f() {\n"
                    "#if A\n"
                    "  for (int t = 0; t + 1 < n; t++) {\n"
                    "#elif B\n"
                    "  while (x) {\n"
                    "#else\n"
                    "  for (int t = 0; t < n; t++) {\n"
                    "#endif\n"
                    "    g();\n"
                    "  }\n"
                    "}\n";
  cr_assert_eq(ks_lex(src, &ts, &err), KS_OK, "%s", err.msg);
  cr_expect_eq(ts.unbalanced_line, 0);
  int braces[4], n = 0;
  for (int i = 0; i < ts.n && n < 4; i++)
    if (ks_tok_is(&ts, i, "{"))
      braces[n++] = i; /* f's, then one per branch */
  cr_assert_eq(n, 4);
  cr_expect_eq(ts.t[ts.t[braces[0]].match].line, 11, "f's { closed by line 11");
  cr_expect_eq(ts.t[ts.t[braces[1]].match].line, 10,
               "the first branch's { closed by line 10");
  ks_toks_free(&ts);
  /* an outer brace closed in both branches: the first close matches it,
   * the second none (matches stay mutual) */
  cr_assert_eq(ks_lex("void f() {\n#if A\n}\n#else\n}\n#endif\n", &ts, &err),
               KS_OK);
  cr_expect_eq(ts.unbalanced_line, 0);
  for (int i = 0; i < ts.n; i++)
    cr_expect(ts.t[i].match < 0 || ts.t[ts.t[i].match].match == i,
              "token %d's match is mutual", i);
  ks_toks_free(&ts);
  /* one branch unbalanced on its own is still reported */
  cr_assert_eq(ks_lex("void f() {\n#if A\n  {\n#endif\n}\n", &ts, &err), KS_OK);
  cr_expect_eq(ts.unbalanced_line, 1);
  ks_toks_free(&ts);
}

Test(spec_lexer, numbers) {
  ks_toks ts;
  ks_err err = {0};
  cr_assert_eq(ks_lex("1.4426950f 1e-5 0x1p+3 .5 1'000", &ts, &err), KS_OK);
  cr_expect_eq(ts.n, 5);
  for (int i = 0; i < ts.n; i++)
    cr_expect_eq(ts.t[i].kind, KS_TOK_NUMBER, "token %d", i);
  ks_toks_free(&ts);
}

Test(spec_lexer, malformed_input_names_the_line) {
  ks_toks ts;
  ks_err err = {0};
  cr_expect_eq(ks_lex("int a;\n/* open\n\n", &ts, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "line 2") && strstr(err.msg, "comment"), "%s",
            err.msg);
  cr_expect_eq(ks_lex("x = \"abc\n\";", &ts, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "line 1") && strstr(err.msg, "string"), "%s",
            err.msg);
  cr_expect_eq(ks_lex("int a;\nint b = 1 @ 2;", &ts, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "line 2"), "%s", err.msg);
  /* a backslash as the last byte inside a literal (a fuzz finding: the
   * scan used to stay on it forever) */
  cr_expect_eq(ks_lex("x = \"abc\\", &ts, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "unterminated string") != NULL, "%s", err.msg);
  cr_expect_eq(ks_lex("c = '\\", &ts, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "unterminated character") != NULL, "%s", err.msg);
  const char bin[] = {'a', 1, 2, 0};
  cr_expect_eq(ks_lex(bin, &ts, &err), KS_ERR_INPUT, "binary bytes");
}

/* issue 13: a NUL after the kernel used to cut the file silently (the C
 * string ended there) and the translation read "clean" */
Test(spec_lexer, nul_byte_is_reported_with_its_line) {
  static const char src[] = "__global__ void k(float *x) {}\n\nint y;\0 junk\n";
  ks_toks ts;
  ks_err err = {0};
  cr_assert_eq(ks_lex_n(src, sizeof src - 1, &ts, &err), KS_ERR_INPUT);
  cr_expect(strstr(err.msg, "line 3") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "NUL") != NULL, "%s", err.msg);
  /* the same text without the NUL lexes */
  cr_assert_eq(ks_lex_n(src, strlen(src), &ts, &err), KS_OK, "%s", err.msg);
  ks_toks_free(&ts);
}
