build-check/obj/tests/unit/test_spec_validator.o: \
 tests/unit/test_spec_validator.c src/spec/spec.h include/ksearch.h \
 src/spec/validator.h
