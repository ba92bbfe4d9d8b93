build-check/obj/src/store/schema.o: src/store/schema.c src/store/store.h \
 include/ksearch.h
src/store/store.h:
include/ksearch.h:
