build-check/obj/tests/unit/test_roofline.o: tests/unit/test_roofline.c \
 src/backend/roofline.h include/ksearch.h src/util/util.h
