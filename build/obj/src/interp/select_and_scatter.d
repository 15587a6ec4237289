build/obj/src/interp/select_and_scatter.o: \
 src/interp/select_and_scatter.c src/interp/interp.h src/ir/ir.h \
 src/ir/ops.h src/ir/ops.def src/ir/shape.h src/ir/types.h include/cxla.h \
 src/util/util.h src/ir/literal.h
src/interp/interp.h:
src/ir/ir.h:
src/ir/ops.h:
src/ir/ops.def:
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
src/ir/literal.h:
