build-check/obj/src/cli/run.o: src/cli/run.c src/cli/cli.h \
 src/dist/broker.h include/ksearch.h src/report/report.h \
 src/backend/roofline.h src/store/store.h src/search/planner.h \
 src/search/analysis.h src/search/class_spec.h src/search/templates.h \
 src/eval/candidate.h src/search/world_model.h src/search/search.h \
 src/eval/eval.h src/backend/backend.h src/util/util.h src/eval/judge.h \
 src/eval/exec_client.h src/eval/exec_proto.h src/eval/timing.h
src/cli/cli.h:
src/dist/broker.h:
include/ksearch.h:
src/report/report.h:
src/backend/roofline.h:
src/store/store.h:
src/search/planner.h:
src/search/analysis.h:
src/search/class_spec.h:
src/search/templates.h:
src/eval/candidate.h:
src/search/world_model.h:
src/search/search.h:
src/eval/eval.h:
src/backend/backend.h:
src/util/util.h:
src/eval/judge.h:
src/eval/exec_client.h:
src/eval/exec_proto.h:
src/eval/timing.h:
