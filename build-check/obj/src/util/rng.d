build-check/obj/src/util/rng.o: src/util/rng.c src/util/util.h \
 include/ksearch.h
