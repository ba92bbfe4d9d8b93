build-check/obj/src/search/world_model_select.o: \
 src/search/world_model_select.c src/search/world_model_internal.h \
 src/search/world_model.h include/ksearch.h
