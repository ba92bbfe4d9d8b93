build-check/obj/tests/unit/test_llm_sse.o: tests/unit/test_llm_sse.c \
 src/llm/llm.h include/ksearch.h
