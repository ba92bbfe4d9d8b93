build-check/obj/src/cli/report.o: src/cli/report.c src/report/report.h \
 src/backend/roofline.h include/ksearch.h src/store/store.h src/cli/cli.h
src/report/report.h:
src/backend/roofline.h:
include/ksearch.h:
src/store/store.h:
src/cli/cli.h:
