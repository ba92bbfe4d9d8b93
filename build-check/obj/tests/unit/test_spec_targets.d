build-check/obj/tests/unit/test_spec_targets.o: \
 tests/unit/test_spec_targets.c src/spec/spec.h include/ksearch.h
