build-check/obj/src/backend/opencl/device.o: src/backend/opencl/device.c \
 src/backend/opencl/ocl.h src/util/util.h include/ksearch.h
