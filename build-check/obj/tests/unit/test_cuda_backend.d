build-check/obj/tests/unit/test_cuda_backend.o: \
 tests/unit/test_cuda_backend.c src/backend/backend.h \
 src/eval/candidate.h include/ksearch.h src/util/util.h \
 src/backend/opencl/launch.h
