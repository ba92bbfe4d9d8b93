build-check/obj/src/search/class_spec.o: src/search/class_spec.c \
 src/search/class_spec.h include/ksearch.h src/util/util.h
