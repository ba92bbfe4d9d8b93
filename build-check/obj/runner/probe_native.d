build-check/obj/runner/probe_native.o: runner/probe_native.c
