build-check/obj/src/cli/roofline.o: src/cli/roofline.c \
 src/backend/roofline.h include/ksearch.h src/backend/opencl/ocl.h \
 src/util/util.h
