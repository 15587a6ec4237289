build/obj/src/util/alloc.o: src/util/alloc.c src/util/util.h \
 include/cxla.h
src/util/util.h:
include/cxla.h:
