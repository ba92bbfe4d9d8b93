build-check/obj/src/spec/concepts.o: src/spec/concepts.c src/spec/spec.h \
 include/ksearch.h src/util/util.h
