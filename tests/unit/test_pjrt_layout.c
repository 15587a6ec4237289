/* pjrt/pjrt_abi.h and pjrt_abi_extensions.h against the layout of XLA's own pjrt_c_api.h and
 * its layouts and shardings extensions (tests/pjrt/layout_facts.h, written by
 * scripts/pjrt_layout_facts.py from the real headers): every struct's size and every
 * declared field's offset and size must agree, so a reordered or mistyped field, or a slot
 * missing from PJRT_Api's table, fails here instead of corrupting a JAX process. */
#include "test.h"
#include "../../pjrt/pjrt_abi_extensions.h"

TEST(pjrt_layout) {
  int structs = 0, fields = 0;
#define CX_LAYOUT_VERSION(major, minor)                                                   \
  CHECK_EQ_INT(CX_PJRT_API_MAJOR, major);                                                 \
  CHECK_EQ_INT(CX_PJRT_API_MINOR, minor);
#define CX_LAYOUT_STRUCT(s, size)                                                         \
  structs++;                                                                              \
  CHECK_MSG(sizeof(struct s) == (size), "sizeof(%s) is %zu, XLA's is %zu", #s,            \
            sizeof(struct s), (size_t)(size));
#define CX_LAYOUT_FIELD(s, f, off, size)                                                  \
  fields++;                                                                               \
  CHECK_MSG(offsetof(struct s, f) == (off) && sizeof(((struct s *)0)->f) == (size),        \
            "%s.%s at %zu (%zu bytes), XLA's at %zu (%zu bytes)", #s, #f,                 \
            offsetof(struct s, f), sizeof(((struct s *)0)->f), (size_t)(off), (size_t)(size));
#include "../pjrt/layout_facts.h"
#undef CX_LAYOUT_VERSION
#undef CX_LAYOUT_STRUCT
#undef CX_LAYOUT_FIELD
  /* The table must describe the whole API table, not a prefix: PJRT_Api's 138 call slots
   * after its three header fields (0.112). */
  CHECK(structs > 90);
  CHECK(fields > 600);
  CHECK_EQ_INT(sizeof(PJRT_Api), 2 * 8 + sizeof(PJRT_Api_Version) + 138 * 8);
}
