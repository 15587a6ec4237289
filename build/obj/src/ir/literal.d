build/obj/src/ir/literal.o: src/ir/literal.c src/ir/literal.h \
 src/ir/shape.h src/ir/types.h include/cxla.h src/util/util.h
src/ir/literal.h:
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
