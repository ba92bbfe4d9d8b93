build-check/obj/src/backend/cuda/support.o: src/backend/cuda/support.c \
 src/backend/cuda/cu.h src/util/util.h include/ksearch.h
