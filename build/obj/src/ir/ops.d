build/obj/src/ir/ops.o: src/ir/ops.c src/ir/ops.h src/ir/ops.def
src/ir/ops.h:
src/ir/ops.def:
