build-check/obj/src/llm/redact.o: src/llm/redact.c src/llm/llm.h \
 include/ksearch.h src/util/util.h
