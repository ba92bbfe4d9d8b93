build-check/obj/src/backend/opencl/launch.o: src/backend/opencl/launch.c \
 src/backend/opencl/launch.h src/eval/candidate.h include/ksearch.h \
 src/task/expr.h src/util/util.h
