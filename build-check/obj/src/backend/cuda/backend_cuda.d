build-check/obj/src/backend/cuda/backend_cuda.o: \
 src/backend/cuda/backend_cuda.c src/backend/backend.h \
 src/eval/candidate.h include/ksearch.h src/util/util.h \
 src/backend/cuda/cu.h src/backend/opencl/launch.h
