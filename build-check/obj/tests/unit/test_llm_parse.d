build-check/obj/tests/unit/test_llm_parse.o: tests/unit/test_llm_parse.c \
 src/llm/answer.h include/ksearch.h src/llm/llm.h
