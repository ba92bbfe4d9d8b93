build-check/obj/src/spec/cuda_analyze.o: src/spec/cuda_analyze.c \
 src/spec/cuda_analyze.h src/spec/cuda_model.h src/spec/lexer.h \
 include/ksearch.h src/spec/spec.h src/util/util.h
