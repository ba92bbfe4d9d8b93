build-check/obj/src/llm/sse.o: src/llm/sse.c src/llm/llm.h \
 include/ksearch.h src/util/util.h
