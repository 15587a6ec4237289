build/obj/src/interp/sort.o: src/interp/sort.c src/interp/interp.h \
 src/ir/ir.h src/ir/ops.h src/ir/ops.def src/ir/shape.h src/ir/types.h \
 include/cxla.h src/util/util.h src/ir/literal.h
src/interp/interp.h:
src/ir/ir.h:
src/ir/ops.h:
src/ir/ops.def:
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
src/ir/literal.h:
