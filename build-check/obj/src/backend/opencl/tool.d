build-check/obj/src/backend/opencl/tool.o: src/backend/opencl/tool.c \
 src/backend/opencl/ocl.h src/util/util.h include/ksearch.h
