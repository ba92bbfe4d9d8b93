build-check/obj/tests/unit/test_timing.o: tests/unit/test_timing.c \
 src/eval/timing.h
