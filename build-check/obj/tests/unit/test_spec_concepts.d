build-check/obj/tests/unit/test_spec_concepts.o: \
 tests/unit/test_spec_concepts.c src/spec/cuda_analyze.h \
 src/spec/cuda_model.h src/spec/lexer.h include/ksearch.h src/spec/spec.h \
 src/spec/seed.h src/util/util.h
