build/obj/src/ir/verify.o: src/ir/verify.c src/ir/verify.h src/ir/ir.h \
 src/ir/ops.h src/ir/ops.def src/ir/shape.h src/ir/types.h include/cxla.h \
 src/util/util.h src/ir/literal.h
src/ir/verify.h:
src/ir/ir.h:
src/ir/ops.h:
src/ir/ops.def:
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
src/ir/literal.h:
