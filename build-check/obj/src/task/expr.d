build-check/obj/src/task/expr.o: src/task/expr.c src/task/expr.h \
 include/ksearch.h src/util/util.h
