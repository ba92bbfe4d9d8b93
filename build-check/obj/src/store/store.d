build-check/obj/src/store/store.o: src/store/store.c src/store/store.h \
 include/ksearch.h
src/store/store.h:
include/ksearch.h:
