build-check/obj/src/spec/validator.o: src/spec/validator.c \
 src/spec/validator.h include/ksearch.h src/spec/lexer.h src/spec/rules.h \
 src/spec/spec.h src/util/util.h
