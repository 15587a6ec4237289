build/obj/tests/unit/test_types.o: tests/unit/test_types.c \
 src/ir/literal.h src/ir/shape.h src/ir/types.h include/cxla.h \
 src/util/util.h tests/unit/test.h
src/ir/literal.h:
src/ir/shape.h:
src/ir/types.h:
include/cxla.h:
src/util/util.h:
tests/unit/test.h:
