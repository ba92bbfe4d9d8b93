build-check/obj/src/dist/job.o: src/dist/job.c src/dist/job.h \
 src/dist/broker.h include/ksearch.h src/eval/eval.h \
 src/backend/backend.h src/eval/candidate.h src/util/util.h \
 src/backend/roofline.h src/eval/judge.h src/eval/exec_client.h \
 src/eval/exec_proto.h src/eval/timing.h
src/dist/job.h:
src/dist/broker.h:
include/ksearch.h:
src/eval/eval.h:
src/backend/backend.h:
src/eval/candidate.h:
src/util/util.h:
src/backend/roofline.h:
src/eval/judge.h:
src/eval/exec_client.h:
src/eval/exec_proto.h:
src/eval/timing.h:
