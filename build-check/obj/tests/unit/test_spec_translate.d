build-check/obj/tests/unit/test_spec_translate.o: \
 tests/unit/test_spec_translate.c src/spec/translate.h \
 src/spec/cuda_analyze.h src/spec/cuda_model.h src/spec/lexer.h \
 include/ksearch.h src/spec/spec.h src/util/util.h src/spec/validator.h
