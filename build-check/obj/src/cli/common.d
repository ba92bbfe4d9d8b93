build-check/obj/src/cli/common.o: src/cli/common.c src/cli/cli.h
