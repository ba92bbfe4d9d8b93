build-check/obj/tests/unit/test_spec_lexer.o: \
 tests/unit/test_spec_lexer.c src/spec/lexer.h include/ksearch.h
