build-check/obj/src/task/inputs.o: src/task/inputs.c src/task/inputs.h \
 include/ksearch.h src/util/util.h
