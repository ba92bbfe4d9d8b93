build-check/obj/src/eval/timing.o: src/eval/timing.c src/eval/timing.h
src/eval/timing.h:
