build/obj/src/util/arena.o: src/util/arena.c src/util/util.h \
 include/cxla.h
src/util/util.h:
include/cxla.h:
