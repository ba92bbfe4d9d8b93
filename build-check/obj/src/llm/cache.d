build-check/obj/src/llm/cache.o: src/llm/cache.c src/llm/llm.h \
 include/ksearch.h src/util/util.h
