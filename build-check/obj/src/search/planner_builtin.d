build-check/obj/src/search/planner_builtin.o: \
 src/search/planner_builtin.c src/search/planner.h src/search/analysis.h \
 src/backend/roofline.h include/ksearch.h src/search/class_spec.h \
 src/search/templates.h src/eval/candidate.h src/search/world_model.h \
 src/spec/seed.h src/util/util.h
