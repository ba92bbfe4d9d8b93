build-check/obj/tests/unit/test_llm_prompts.o: \
 tests/unit/test_llm_prompts.c src/llm/prompts.h include/ksearch.h
