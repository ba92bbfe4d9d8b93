build-check/obj/src/backend/c/roofline_native.o: \
 src/backend/c/roofline_native.c src/backend/roofline.h include/ksearch.h \
 src/util/util.h
