build-check/obj/src/llm/retry.o: src/llm/retry.c src/llm/llm.h \
 include/ksearch.h
