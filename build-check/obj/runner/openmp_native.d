build-check/obj/runner/openmp_native.o: runner/openmp_native.c
