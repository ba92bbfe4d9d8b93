build-check/obj/src/cli/worker.o: src/cli/worker.c src/dist/worker.h \
 src/dist/broker.h include/ksearch.h src/cli/cli.h src/util/util.h
