build-check/obj/src/llm/precheck.o: src/llm/precheck.c src/llm/precheck.h \
 include/ksearch.h src/util/util.h
