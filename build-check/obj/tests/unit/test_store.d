build-check/obj/tests/unit/test_store.o: tests/unit/test_store.c \
 src/store/store.h include/ksearch.h
