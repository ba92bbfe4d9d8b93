build-check/obj/tests/unit/test_exec_proto.o: \
 tests/unit/test_exec_proto.c src/eval/exec_client.h \
 src/eval/exec_proto.h include/ksearch.h src/util/util.h
