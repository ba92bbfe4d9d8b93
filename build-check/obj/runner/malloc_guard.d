build-check/obj/runner/malloc_guard.o: runner/malloc_guard.c \
 src/eval/exec_proto.h include/ksearch.h src/util/util.h
