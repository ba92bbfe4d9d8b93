build-check/obj/src/eval/exec_proto.o: src/eval/exec_proto.c \
 src/eval/exec_proto.h include/ksearch.h src/util/util.h
