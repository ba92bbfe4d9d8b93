build-check/obj/src/util/err.o: src/util/err.c include/ksearch.h
