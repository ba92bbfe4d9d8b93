build-check/obj/src/cli/translate.o: src/cli/translate.c \
 src/spec/translate.h src/spec/cuda_analyze.h src/spec/cuda_model.h \
 src/spec/lexer.h include/ksearch.h src/spec/spec.h src/util/util.h \
 src/cli/cli.h src/spec/validator.h
