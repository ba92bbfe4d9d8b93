build-check/obj/tests/unit/test_llm_edits.o: tests/unit/test_llm_edits.c \
 src/llm/answer.h include/ksearch.h src/llm/edits.h \
 src/search/world_model.h
