build-check/obj/src/backend/cuda/roofline_cuda.o: \
 src/backend/cuda/roofline_cuda.c src/backend/cuda/cu.h src/util/util.h \
 include/ksearch.h src/backend/roofline.h
