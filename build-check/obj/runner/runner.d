build-check/obj/runner/runner.o: runner/runner.c src/backend/cuda/cu.h \
 src/util/util.h include/ksearch.h src/backend/opencl/ocl.h
