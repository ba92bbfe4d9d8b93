build-check/obj/src/dist/broker.o: src/dist/broker.c \
 src/dist/broker_internal.h src/dist/broker.h include/ksearch.h \
 src/util/util.h
