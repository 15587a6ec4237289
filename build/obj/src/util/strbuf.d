build/obj/src/util/strbuf.o: src/util/strbuf.c src/util/util.h \
 include/cxla.h
src/util/util.h:
include/cxla.h:
