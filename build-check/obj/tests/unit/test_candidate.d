build-check/obj/tests/unit/test_candidate.o: tests/unit/test_candidate.c \
 src/eval/candidate.h include/ksearch.h
