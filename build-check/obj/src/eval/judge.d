build-check/obj/src/eval/judge.o: src/eval/judge.c src/eval/judge.h \
 src/eval/exec_client.h src/eval/exec_proto.h include/ksearch.h \
 src/util/util.h src/eval/timing.h src/backend/backend.h \
 src/eval/candidate.h src/eval/correctness.h src/eval/sandbox.h \
 src/task/inputs.h
src/eval/judge.h:
src/eval/exec_client.h:
src/eval/exec_proto.h:
include/ksearch.h:
src/util/util.h:
src/eval/timing.h:
src/backend/backend.h:
src/eval/candidate.h:
src/eval/correctness.h:
src/eval/sandbox.h:
src/task/inputs.h:
