build-check/obj/src/task/signature.o: src/task/signature.c \
 src/task/signature.h src/util/util.h include/ksearch.h
