build-check/obj/src/report/html.o: src/report/html.c \
 src/report/html_internal.h src/report/report.h src/backend/roofline.h \
 include/ksearch.h src/store/store.h src/report/report_internal.h \
 src/util/util.h
src/report/html_internal.h:
src/report/report.h:
src/backend/roofline.h:
include/ksearch.h:
src/store/store.h:
src/report/report_internal.h:
src/util/util.h:
