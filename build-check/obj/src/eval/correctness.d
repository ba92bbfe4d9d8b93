build-check/obj/src/eval/correctness.o: src/eval/correctness.c \
 src/eval/correctness.h include/ksearch.h
