build-check/obj/src/eval/eval.o: src/eval/eval.c src/eval/eval.h \
 src/backend/backend.h src/eval/candidate.h include/ksearch.h \
 src/util/util.h src/backend/roofline.h src/eval/judge.h \
 src/eval/exec_client.h src/eval/exec_proto.h src/eval/timing.h \
 src/eval/sandbox.h src/spec/validator.h
src/eval/eval.h:
src/backend/backend.h:
src/eval/candidate.h:
include/ksearch.h:
src/util/util.h:
src/backend/roofline.h:
src/eval/judge.h:
src/eval/exec_client.h:
src/eval/exec_proto.h:
src/eval/timing.h:
src/eval/sandbox.h:
src/spec/validator.h:
