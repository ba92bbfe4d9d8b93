build-check/obj/src/task/dtype.o: src/task/dtype.c include/ksearch.h
