build-check/obj/src/llm/edits.o: src/llm/edits.c src/llm/edits.h \
 src/search/world_model.h include/ksearch.h src/util/util.h
