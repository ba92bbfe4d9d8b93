build-check/obj/tests/unit/test_llm_redact.o: \
 tests/unit/test_llm_redact.c src/llm/llm.h include/ksearch.h
