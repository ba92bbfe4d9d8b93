build-check/obj/tests/unit/test_expr.o: tests/unit/test_expr.c \
 src/task/expr.h include/ksearch.h
