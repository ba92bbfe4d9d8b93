build-check/obj/src/report/diff.o: src/report/diff.c \
 src/report/report_internal.h src/util/util.h include/ksearch.h
