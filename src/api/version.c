/* version.c — cxla_version(): the version compiled into the library, from cxla.h's macros. */
#include "cxla.h"

#define CX_STR_(x) #x
#define CX_STR(x) CX_STR_(x)

const char *cxla_version(void) {
  return CX_STR(CXLA_VERSION_MAJOR) "." CX_STR(CXLA_VERSION_MINOR) "." CX_STR(CXLA_VERSION_PATCH);
}
