build-check/obj/tests/unit/test_planner.o: tests/unit/test_planner.c \
 src/search/analysis.h src/backend/roofline.h include/ksearch.h \
 src/search/class_spec.h src/search/planner.h src/search/templates.h \
 src/eval/candidate.h src/search/world_model.h src/util/util.h
