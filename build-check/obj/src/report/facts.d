build-check/obj/src/report/facts.o: src/report/facts.c \
 src/report/report.h src/backend/roofline.h include/ksearch.h \
 src/store/store.h src/report/report_internal.h src/util/util.h
src/report/report.h:
src/backend/roofline.h:
include/ksearch.h:
src/store/store.h:
src/report/report_internal.h:
src/util/util.h:
