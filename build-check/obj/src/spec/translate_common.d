build-check/obj/src/spec/translate_common.o: src/spec/translate_common.c \
 src/spec/rules.h src/spec/lexer.h include/ksearch.h src/spec/spec.h \
 src/spec/translate_internal.h src/spec/translate.h \
 src/spec/cuda_analyze.h src/spec/cuda_model.h src/util/util.h
