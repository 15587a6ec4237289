build/obj/src/ir/clone.o: src/ir/clone.c src/ir/clone.h src/ir/ir.h \
 src/ir/ops.h src/ir/ops.def src/ir/shape.h src/ir/types.h include/cxla.h \
 src/util/util.h src/ir/literal.h
src/ir/clone.h:
src/ir/ir.h:
src/ir/ops.h:
src/ir/ops.def:
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
src/ir/literal.h:
