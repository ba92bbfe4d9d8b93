build-check/obj/src/search/world_model_ops.o: \
 src/search/world_model_ops.c src/search/world_model_internal.h \
 src/search/world_model.h include/ksearch.h
