build-check/obj/tests/unit/test_opencl_backend.o: \
 tests/unit/test_opencl_backend.c src/backend/backend.h \
 src/eval/candidate.h include/ksearch.h src/util/util.h \
 src/backend/opencl/ocl.h
