build-check/obj/src/eval/sandbox.o: src/eval/sandbox.c src/eval/sandbox.h \
 include/ksearch.h src/backend/backend.h src/eval/candidate.h \
 src/util/util.h
