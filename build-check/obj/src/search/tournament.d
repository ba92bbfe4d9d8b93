build-check/obj/src/search/tournament.o: src/search/tournament.c \
 src/search/tournament.h src/eval/eval.h src/backend/backend.h \
 src/eval/candidate.h include/ksearch.h src/util/util.h \
 src/backend/roofline.h src/eval/judge.h src/eval/exec_client.h \
 src/eval/exec_proto.h src/eval/timing.h src/store/store.h
src/search/tournament.h:
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
src/store/store.h:
