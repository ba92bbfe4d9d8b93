build-check/obj/src/util/hash.o: src/util/hash.c src/util/util.h \
 include/ksearch.h
