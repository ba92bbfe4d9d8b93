build-check/obj/src/report/svg.o: src/report/svg.c include/ksearch.h \
 src/report/report_internal.h src/util/util.h
