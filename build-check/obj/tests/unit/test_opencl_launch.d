build-check/obj/tests/unit/test_opencl_launch.o: \
 tests/unit/test_opencl_launch.c src/backend/opencl/launch.h \
 src/eval/candidate.h include/ksearch.h src/util/util.h
