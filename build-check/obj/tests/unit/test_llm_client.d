build-check/obj/tests/unit/test_llm_client.o: \
 tests/unit/test_llm_client.c src/llm/llm.h include/ksearch.h \
 src/store/store.h src/util/util.h
