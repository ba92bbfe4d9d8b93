build-check/obj/src/search/search.o: src/search/search.c \
 src/search/search.h src/eval/eval.h src/backend/backend.h \
 src/eval/candidate.h include/ksearch.h src/util/util.h \
 src/backend/roofline.h src/eval/judge.h src/eval/exec_client.h \
 src/eval/exec_proto.h src/eval/timing.h src/llm/llm.h \
 src/report/report.h src/store/store.h src/search/planner.h \
 src/search/analysis.h src/search/class_spec.h src/search/templates.h \
 src/search/world_model.h src/search/search_internal.h \
 src/search/tournament.h
src/search/search.h:
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
src/llm/llm.h:
src/report/report.h:
src/store/store.h:
src/search/planner.h:
src/search/analysis.h:
src/search/class_spec.h:
src/search/templates.h:
src/search/world_model.h:
src/search/search_internal.h:
src/search/tournament.h:
