build-check/obj/src/search/analysis.o: src/search/analysis.c \
 src/search/analysis.h src/backend/roofline.h include/ksearch.h \
 src/search/class_spec.h src/backend/backend.h src/eval/candidate.h \
 src/util/util.h
