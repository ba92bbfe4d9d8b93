build-check/obj/runner/runner.o: runner/runner.c src/backend/opencl/ocl.h \
 src/util/util.h include/ksearch.h
