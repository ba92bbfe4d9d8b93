build-check/obj/src/util/clock.o: src/util/clock.c src/util/util.h \
 include/ksearch.h
