build-check/obj/src/search/world_model_render.o: \
 src/search/world_model_render.c src/search/world_model_internal.h \
 src/search/world_model.h include/ksearch.h
