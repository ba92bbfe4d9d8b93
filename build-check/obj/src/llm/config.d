build-check/obj/src/llm/config.o: src/llm/config.c src/llm/llm.h \
 include/ksearch.h src/util/util.h
