build-check/obj/src/dist/worker.o: src/dist/worker.c src/dist/worker.h \
 src/dist/broker.h include/ksearch.h src/backend/roofline.h \
 src/dist/job.h src/eval/eval.h src/backend/backend.h \
 src/eval/candidate.h src/util/util.h src/eval/judge.h \
 src/eval/exec_client.h src/eval/exec_proto.h src/eval/timing.h
src/dist/worker.h:
src/dist/broker.h:
include/ksearch.h:
src/backend/roofline.h:
src/dist/job.h:
src/eval/eval.h:
src/backend/backend.h:
src/eval/candidate.h:
src/util/util.h:
src/eval/judge.h:
src/eval/exec_client.h:
src/eval/exec_proto.h:
src/eval/timing.h:
