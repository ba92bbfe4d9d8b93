build-check/obj/src/util/fs.o: src/util/fs.c src/util/util.h \
 include/ksearch.h
