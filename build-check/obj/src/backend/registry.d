build-check/obj/src/backend/registry.o: src/backend/registry.c \
 src/backend/backend.h src/eval/candidate.h include/ksearch.h \
 src/util/util.h
