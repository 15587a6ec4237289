build/obj/tools/cxla.o: tools/cxla.c
