build-check/obj/src/spec/cuda_model.o: src/spec/cuda_model.c \
 src/spec/cuda_model.h src/spec/lexer.h include/ksearch.h src/util/util.h
