build/obj/src/text/npy.o: src/text/npy.c src/text/npy.h src/ir/literal.h \
 src/ir/shape.h src/ir/types.h include/cxla.h src/util/util.h
src/text/npy.h:
src/ir/literal.h:
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
