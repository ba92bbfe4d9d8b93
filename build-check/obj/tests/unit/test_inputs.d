build-check/obj/tests/unit/test_inputs.o: tests/unit/test_inputs.c \
 src/task/inputs.h include/ksearch.h
