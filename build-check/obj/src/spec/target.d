build-check/obj/src/spec/target.o: src/spec/target.c \
 src/backend/roofline.h include/ksearch.h src/spec/spec.h src/util/util.h
