/* fuzz_candidate.c — candidate header lines (src/eval/candidate.c) and the
 * OpenCL launch lines (src/backend/opencl/launch.c): `// ksearch:` keys,
 * param declarations, launch geometry. A parsed candidate's parameters are
 * set back through ks_candidate_set_param (the --param path): every value
 * the header accepted must pass the same rule there. */
#include "backend/opencl/launch.h"
#include "eval/candidate.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ks_fuzz_quiet();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *src = ks_fuzz_text(data, size);
  ks_candidate c;
  ks_err err = {0};
  if (ks_candidate_parse(src, "fuzz.c", "dflt", &c, &err) == KS_OK) {
    for (int i = 0; i < c.n_decls; i++)
      for (int v = 0; v < c.decls[i].n_values; v++)
        if (ks_candidate_set_param(&c, c.decls[i].name, c.decls[i].values[v],
                                   &err) != KS_OK)
          abort(); /* one rule for header and --param values */
    ks_candidate_fill_defaults(&c);
    free(ks_candidate_params_json(&c));
    (void)ks_candidate_hash(&c);
    ks_launch_plan p;
    if (ks_launch_parse(src, "fuzz.c", c.entry, &p, &err) == KS_OK)
      ks_launch_free(&p);
    ks_candidate_free(&c);
  }
  free(src);
  return 0;
}
