build-check/obj/src/eval/candidate.o: src/eval/candidate.c \
 src/eval/candidate.h include/ksearch.h src/util/util.h
