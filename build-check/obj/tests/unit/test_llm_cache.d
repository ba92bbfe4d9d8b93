build-check/obj/tests/unit/test_llm_cache.o: tests/unit/test_llm_cache.c \
 src/llm/llm.h include/ksearch.h src/util/util.h
