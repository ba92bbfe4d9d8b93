build-check/obj/src/backend/roofline.o: src/backend/roofline.c \
 src/backend/roofline.h include/ksearch.h src/util/util.h
