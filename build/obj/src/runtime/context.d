build/obj/src/runtime/context.o: src/runtime/context.c \
 src/runtime/context.h src/runtime/flags.h src/util/util.h include/cxla.h
src/runtime/context.h:
src/runtime/flags.h:
src/util/util.h:
include/cxla.h:
