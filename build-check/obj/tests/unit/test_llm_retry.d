build-check/obj/tests/unit/test_llm_retry.o: tests/unit/test_llm_retry.c \
 src/llm/llm.h include/ksearch.h
