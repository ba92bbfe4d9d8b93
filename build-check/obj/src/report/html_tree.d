build-check/obj/src/report/html_tree.o: src/report/html_tree.c \
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
