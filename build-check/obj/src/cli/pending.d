build-check/obj/src/cli/pending.o: src/cli/pending.c src/cli/cli.h
