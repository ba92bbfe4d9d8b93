build-check/obj/src/cli/tasks.o: src/cli/tasks.c src/cli/cli.h \
 src/util/util.h include/ksearch.h
