build/obj/src/text/parser.o: src/text/parser.c src/text/hlo.h src/ir/ir.h \
 src/ir/ops.h src/ir/ops.def src/ir/shape.h src/ir/types.h include/cxla.h \
 src/util/util.h src/ir/literal.h
src/text/hlo.h:
src/ir/ir.h:
src/ir/ops.h:
src/ir/ops.def:
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
src/ir/literal.h:
