build-check/obj/src/spec/seed.o: src/spec/seed.c src/spec/seed.h \
 include/ksearch.h src/spec/cuda_analyze.h src/spec/cuda_model.h \
 src/spec/lexer.h src/spec/spec.h src/util/util.h
