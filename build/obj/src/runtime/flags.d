build/obj/src/runtime/flags.o: src/runtime/flags.c src/runtime/flags.h \
 src/util/util.h include/cxla.h
src/runtime/flags.h:
src/util/util.h:
include/cxla.h:
