build-check/obj/src/util/str.o: src/util/str.c src/util/util.h \
 include/ksearch.h
