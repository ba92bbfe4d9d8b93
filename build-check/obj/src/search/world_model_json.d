build-check/obj/src/search/world_model_json.o: \
 src/search/world_model_json.c src/search/world_model_internal.h \
 src/search/world_model.h include/ksearch.h
