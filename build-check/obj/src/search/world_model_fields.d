build-check/obj/src/search/world_model_fields.o: \
 src/search/world_model_fields.c src/search/world_model_internal.h \
 src/search/world_model.h include/ksearch.h
