build-check/obj/src/backend/c/backend_c.o: src/backend/c/backend_c.c \
 src/backend/backend.h src/eval/candidate.h include/ksearch.h \
 src/util/util.h src/task/signature.h
