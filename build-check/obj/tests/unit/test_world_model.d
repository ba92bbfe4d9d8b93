build-check/obj/tests/unit/test_world_model.o: \
 tests/unit/test_world_model.c src/search/world_model.h include/ksearch.h
