build-check/obj/tests/unit/test_correctness.o: \
 tests/unit/test_correctness.c src/eval/correctness.h include/ksearch.h \
 src/util/util.h
