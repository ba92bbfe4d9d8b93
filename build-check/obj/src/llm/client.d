build-check/obj/src/llm/client.o: src/llm/client.c src/llm/llm.h \
 include/ksearch.h src/store/store.h src/util/util.h
src/llm/llm.h:
include/ksearch.h:
src/store/store.h:
src/util/util.h:
