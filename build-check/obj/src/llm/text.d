build-check/obj/src/llm/text.o: src/llm/text.c src/llm/llm.h \
 include/ksearch.h src/util/util.h
