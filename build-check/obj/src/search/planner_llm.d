build-check/obj/src/search/planner_llm.o: src/search/planner_llm.c \
 src/eval/eval.h src/backend/backend.h src/eval/candidate.h \
 include/ksearch.h src/util/util.h src/backend/roofline.h \
 src/eval/judge.h src/eval/exec_client.h src/eval/exec_proto.h \
 src/eval/timing.h src/llm/answer.h src/llm/context.h \
 src/search/class_spec.h src/search/templates.h src/llm/edits.h \
 src/search/world_model.h src/llm/llm.h src/llm/precheck.h \
 src/llm/prompts.h src/search/planner.h src/search/analysis.h \
 src/spec/spec.h src/spec/validator.h src/store/store.h
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
src/llm/answer.h:
src/llm/context.h:
src/search/class_spec.h:
src/search/templates.h:
src/llm/edits.h:
src/search/world_model.h:
src/llm/llm.h:
src/llm/precheck.h:
src/llm/prompts.h:
src/search/planner.h:
src/search/analysis.h:
src/spec/spec.h:
src/spec/validator.h:
src/store/store.h:
