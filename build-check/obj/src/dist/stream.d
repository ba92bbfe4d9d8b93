build-check/obj/src/dist/stream.o: src/dist/stream.c \
 src/dist/broker_internal.h src/dist/broker.h include/ksearch.h \
 src/util/util.h
