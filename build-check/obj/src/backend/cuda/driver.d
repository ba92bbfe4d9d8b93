build-check/obj/src/backend/cuda/driver.o: src/backend/cuda/driver.c \
 src/backend/cuda/cu.h src/util/util.h include/ksearch.h
