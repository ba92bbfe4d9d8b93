build-check/obj/src/store/jobs.o: src/store/jobs.c src/store/store.h \
 include/ksearch.h src/util/util.h
src/store/store.h:
include/ksearch.h:
src/util/util.h:
