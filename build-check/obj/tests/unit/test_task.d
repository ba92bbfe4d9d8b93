build-check/obj/tests/unit/test_task.o: tests/unit/test_task.c \
 src/task/expr.h include/ksearch.h src/util/util.h
