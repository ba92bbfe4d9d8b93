build-check/obj/src/search/templates.o: src/search/templates.c \
 src/search/templates.h src/eval/candidate.h include/ksearch.h \
 src/util/util.h
