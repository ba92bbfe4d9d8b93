build-check/obj/src/search/world_model.o: src/search/world_model.c \
 src/search/world_model_internal.h src/search/world_model.h \
 include/ksearch.h
