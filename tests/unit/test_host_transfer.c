/* test_host_transfer.c — send, send-done, recv and recv-done: XLA's verifier's shapes, the text
 * (channel_id=, is_host_transfer=), and the refusal when compiling, located at each one
 * (tests/hlo/errors/send_recv_refused.hlo has a whole module). */
#include <string.h>
#include "verify_helpers.h"
#include "cxla.h"

static const char *body(const char *lines) {
  static char b[1024];
  snprintf(b, sizeof b, "  x = f32[4] parameter(0)\n  t = token[] after-all()\n%s", lines);
  return vt_verify_body(b);
}

TEST(host_transfer_shapes) {
  CHECK_STR_EQ(body("  s = (f32[4], u32[], token[]) send(x, t), channel_id=3\n"
                    "  ROOT d = token[] send-done(s), channel_id=3\n"),
               "ok");
  CHECK_STR_EQ(body("  r = ((f32[2], s32[]), u32[], token[]) recv(t), channel_id=4, is_host_transfer=true\n"
                    "  ROOT d = ((f32[2], s32[]), token[]) recv-done(r), channel_id=4, is_host_transfer=true\n"),
               "ok");
  CHECK_STR_CONTAINS(body("  ROOT s = (f32[4], s32[], token[]) send(x, t)\n"), "(f32[4], u32[], token[])");
  CHECK_STR_CONTAINS(body("  ROOT s = (f32[4], u32[], token[]) send(x, x)\n"), "operand 1 must be a token, got f32[4]");
  CHECK_STR_CONTAINS(body("  ROOT s = (token[], u32[], token[]) send(t, t)\n"), "operand 0 is the data to send, got a token");
  CHECK_STR_CONTAINS(body("  ROOT r = f32[4] recv(t)\n"), "the written shape must be (data, u32[], token[]), got f32[4]");
  CHECK_STR_CONTAINS(body("  ROOT r = (f32[4], u32[], token[]) recv(x)\n"), "operand 0 must be a token, got f32[4]");
  CHECK_STR_CONTAINS(body("  ROOT d = token[] send-done(x)\n"),
                     "operand must be the (data, u32[], token[]) of a send, got f32[4]");
  CHECK_STR_CONTAINS(body("  r = (f32[4], u32[], token[]) recv(t)\n  ROOT d = (f32[2], token[]) recv-done(r)\n"),
                     "(f32[4], token[])");
  CHECK_STR_CONTAINS(body("  s = (f32[4], u32[], token[]) send(x, t), channel_id=1\n"
                          "  ROOT d = token[] send-done(s), channel_id=2\n"),
                     "channel_id=2 differs from its send's channel_id=1");
}

/* Compiling refuses each of them where it is written, on the interpreter and the cpu. */
TEST(host_transfer_refused_when_compiling) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  t = token[] after-all()\n"
                     "  r = (f32[4], u32[], token[]) recv(t), channel_id=15, is_host_transfer=true\n"
                     "  rd = (f32[4], token[]) recv-done(r), channel_id=15, is_host_transfer=true\n"
                     "  d = f32[4] get-tuple-element(rd), index=0\n  sum = f32[4] add(x, d)\n"
                     "  s = (f32[4], u32[], token[]) send(sum, t), channel_id=16\n"
                     "  sd = token[] send-done(s), channel_id=16\n  ROOT c = f32[4] copy(sum)\n}\n";
  static const char *const backends[] = {"interp", "cpu"};
  for (int i = 0; i < 2; i++) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "t.hlo", &m));
    if (!m) return;
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[i];
    cxla_executable *e = NULL;
    CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_UNSUPPORTED);
    const char *msg = cxla_context_errmsg(test_ctx());
    CHECK_STR_CONTAINS(msg, "t.hlo:5:3 recv 'r' (a host transfer (send, recv and their -done)");
    CHECK_STR_CONTAINS(msg, "t.hlo:6:3 recv-done 'rd'");
    CHECK_STR_CONTAINS(msg, "t.hlo:9:3 send 's'");
    CHECK_STR_CONTAINS(msg, "t.hlo:10:3 send-done 'sd'");
    if (e) cxla_executable_destroy(e);
    cxla_module_destroy(m);
  }
}
