build/obj/tests/unit/test_main.o: tests/unit/test_main.c \
 tests/unit/test.h include/cxla.h
tests/unit/test.h:
include/cxla.h:
