build-check/obj/src/backend/opencl/roofline_opencl.o: \
 src/backend/opencl/roofline_opencl.c src/backend/opencl/ocl.h \
 src/util/util.h include/ksearch.h src/backend/roofline.h
