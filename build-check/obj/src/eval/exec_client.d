build-check/obj/src/eval/exec_client.o: src/eval/exec_client.c \
 src/eval/exec_client.h src/eval/exec_proto.h include/ksearch.h \
 src/util/util.h
src/eval/exec_client.h:
src/eval/exec_proto.h:
include/ksearch.h:
src/util/util.h:
