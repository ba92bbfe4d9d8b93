build-check/obj/tests/unit/test_report.o: tests/unit/test_report.c \
 src/report/report.h src/backend/roofline.h include/ksearch.h \
 src/store/store.h src/report/report_internal.h src/util/util.h
