build-check/obj/src/main.o: src/main.c src/cli/cli.h include/ksearch.h
