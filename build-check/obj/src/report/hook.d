build-check/obj/src/report/hook.o: src/report/hook.c src/report/report.h \
 src/backend/roofline.h include/ksearch.h src/store/store.h \
 src/util/util.h
src/report/report.h:
src/backend/roofline.h:
include/ksearch.h:
src/store/store.h:
src/util/util.h:
