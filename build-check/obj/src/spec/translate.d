build-check/obj/src/spec/translate.o: src/spec/translate.c \
 src/spec/translate_internal.h src/spec/translate.h \
 src/spec/cuda_analyze.h src/spec/cuda_model.h src/spec/lexer.h \
 include/ksearch.h src/spec/spec.h src/util/util.h
