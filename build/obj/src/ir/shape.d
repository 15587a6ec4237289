build/obj/src/ir/shape.o: src/ir/shape.c src/ir/shape.h src/ir/types.h \
 include/cxla.h src/util/util.h
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
