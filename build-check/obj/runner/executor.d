build-check/obj/runner/executor.o: runner/executor.c \
 src/backend/backend.h src/eval/candidate.h include/ksearch.h \
 src/util/util.h src/eval/exec_proto.h src/eval/sandbox.h
