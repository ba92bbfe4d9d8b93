build-check/obj/src/task/task.o: src/task/task.c src/task/expr.h \
 include/ksearch.h src/util/util.h
