build-check/obj/src/util/log.o: src/util/log.c src/util/util.h \
 include/ksearch.h
