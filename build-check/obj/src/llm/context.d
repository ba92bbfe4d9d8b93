build-check/obj/src/llm/context.o: src/llm/context.c src/llm/context.h \
 src/backend/roofline.h include/ksearch.h src/search/class_spec.h \
 src/search/templates.h src/eval/candidate.h src/task/signature.h \
 src/util/util.h
