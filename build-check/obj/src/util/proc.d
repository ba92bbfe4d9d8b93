build-check/obj/src/util/proc.o: src/util/proc.c src/util/util.h \
 include/ksearch.h
