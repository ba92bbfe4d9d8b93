build-check/obj/src/llm/answer.o: src/llm/answer.c src/llm/answer.h \
 include/ksearch.h src/util/util.h
