build/obj/src/ir/types.o: src/ir/types.c src/ir/types.h include/cxla.h \
 src/ir/types.def
src/ir/types.h:
include/cxla.h:
src/ir/types.def:
