build-check/obj/tests/unit/test_store_jobs.o: \
 tests/unit/test_store_jobs.c src/store/store.h include/ksearch.h
