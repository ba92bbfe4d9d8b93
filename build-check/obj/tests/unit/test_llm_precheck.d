build-check/obj/tests/unit/test_llm_precheck.o: \
 tests/unit/test_llm_precheck.c src/llm/precheck.h include/ksearch.h
