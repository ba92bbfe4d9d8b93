build-check/obj/src/report/html_util.o: src/report/html_util.c \
 src/report/report_internal.h src/util/util.h include/ksearch.h
