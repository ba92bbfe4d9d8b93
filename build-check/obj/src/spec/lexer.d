build-check/obj/src/spec/lexer.o: src/spec/lexer.c src/spec/lexer.h \
 include/ksearch.h src/util/util.h
