build-check/obj/src/llm/prompts.o: src/llm/prompts.c src/llm/prompts.h \
 include/ksearch.h src/util/util.h
