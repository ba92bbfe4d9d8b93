build-check/obj/tests/unit/test_proc.o: tests/unit/test_proc.c \
 src/util/util.h include/ksearch.h
