build-check/obj/tests/unit/test_llm_config.o: \
 tests/unit/test_llm_config.c src/llm/llm.h include/ksearch.h
