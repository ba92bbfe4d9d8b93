build-check/obj/src/backend/opencl/backend_opencl.o: \
 src/backend/opencl/backend_opencl.c src/backend/backend.h \
 src/eval/candidate.h include/ksearch.h src/util/util.h \
 src/backend/opencl/launch.h src/backend/opencl/ocl.h
