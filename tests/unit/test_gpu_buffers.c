/* test_gpu_buffers.c — buffers that live on the GPU (gpu-emu: the gpu backend over the
 * emulated driver): results stay on the device, a donated argument lends its memory to the
 * result, a training-style loop asks the driver for nothing after its first step, tuples
 * split on the device, and copies between the GPU and the host both ways; with the errors a
 * consumed or empty buffer gives. */
#include <stdint.h>
#include <string.h>
#include "backend/gpu/emu.h"
#include "runtime/buffer.h"
#include "test.h"

static const char *const EMU = "gpu-emu";

static const char step_text[] = /* w - 0.5 * g, and sum(g) alongside (an SGD step's shape) */
    "HloModule step\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "ENTRY main {\n"
    "  w = f32[4096] parameter(0)\n"
    "  g = f32[4096] parameter(1)\n"
    "  h = f32[] constant(0.5)\n"
    "  hb = f32[4096] broadcast(h), dimensions={}\n"
    "  d = f32[4096] multiply(g, hb)\n"
    "  nw = f32[4096] subtract(w, d)\n"
    "  z = f32[] constant(0)\n"
    "  s = f32[] reduce(g, z), dimensions={0}, to_apply=add\n"
    "  ROOT t = (f32[4096], f32[]) tuple(nw, s)\n"
    "}\n";

static cxla_executable *compile_text(const char *text, const char *backend, uint64_t donate) {
  return test_compile_text(text, "step.hlo", backend, donate);
}

static const char momentum_text[] = /* m' = m + g, w' = w - m' / 2: both computed in place */
    "HloModule momentum\n"
    "ENTRY main {\n"
    "  w = f32[4096] parameter(0)\n"
    "  g = f32[4096] parameter(1)\n"
    "  m = f32[4096] parameter(2)\n"
    "  h = f32[] constant(0.5)\n"
    "  hb = f32[4096] broadcast(h), dimensions={}\n"
    "  nm = f32[4096] add(m, g)\n"
    "  d = f32[4096] multiply(nm, hb)\n"
    "  nw = f32[4096] subtract(w, d)\n"
    "  ROOT t = (f32[4096], f32[4096]) tuple(nw, nm)\n"
    "}\n";

enum { N = 4096, STEPS = 12 };

TEST(gpu_buffers_training_loop_stays_on_device) {
  cxla_executable *e = compile_text(momentum_text, EMU, 1 | 4); /* w and m are donated */
  static float w0[N], g[N], m0[N];
  for (int i = 0; i < N; i++) w0[i] = (float)(i % 97) * 0.25f, g[i] = (float)(i % 13) - 6.0f, m0[i] = (float)(i % 5);
  int64_t dims[1] = {N};
  cxla_buffer *w = NULL, *bg = NULL, *m = NULL;
  CHECK_OK(cxla_buffer_from_data(test_ctx(), EMU, CXLA_F32, 1, dims, w0, sizeof w0, &w));
  CHECK_OK(cxla_buffer_from_data(test_ctx(), EMU, CXLA_F32, 1, dims, g, sizeof g, &bg));
  CHECK_OK(cxla_buffer_from_data(test_ctx(), EMU, CXLA_F32, 1, dims, m0, sizeof m0, &m));
  if (!e || !w || !bg || !m) goto done;
  CHECK(cxla_buffer_memory(w) && !strcmp(cxla_buffer_memory(w), EMU));
  CHECK(w->dev && !w->host); /* nothing kept on the host */
  cxla_memory_stats st[STEPS];
  memset(st, 0, sizeof st);
  for (int k = 0; k < STEPS; k++) {
    cxla_buffer *args[3] = {w, bg, m}, *r = NULL, *el[2] = {NULL, NULL};
    unsigned long long wat = w->dev ? w->dev->addr[0] : 0, mat = m->dev ? m->dev->addr[0] : 0;
    CHECK_OK(cxla_executable_execute(e, 3, args, &r));
    CHECK(cxla_buffer_memory(w) == NULL && cxla_buffer_memory(m) == NULL); /* consumed */
    cxla_buffer_destroy(w);
    cxla_buffer_destroy(m);
    w = m = NULL;
    if (!r) break;
    CHECK(r->dev && !r->host && !strcmp(cxla_buffer_memory(r), EMU));
    CHECK_OK(cxla_buffer_untuple(r, 2, el));
    cxla_buffer_destroy(r);
    w = el[0], m = el[1];
    if (!w || !m) break;
    CHECK(w->dev && m->dev && !w->host && !m->host);
    /* the new state was computed where the donated state was */
    CHECK_MSG(w->dev->addr[0] == wat && m->dev->addr[0] == mat, "step %d: the results are at %llx, %llx; the donated "
              "arguments were at %llx, %llx", k, w->dev->addr[0], m->dev->addr[0], wat, mat);
    CHECK_OK(cxla_context_memory_stats(test_ctx(), EMU, &st[k]));
  }
  /* after the first step nothing more is asked of the driver */
  CHECK_MSG(st[STEPS - 1].driver_allocs == st[0].driver_allocs, "driver allocations grew from %lld to %lld",
            (long long)st[0].driver_allocs, (long long)st[STEPS - 1].driver_allocs);
  CHECK(st[STEPS - 1].in_use == st[0].in_use && st[0].in_use >= 3 * (int64_t)sizeof w0);
  const float *got = w ? cxla_buffer_data(w) : NULL; /* one copy to the host, kept */
  CHECK(got && w->host);
  for (int i = 0; got && i < N; i++) {
    float want = w0[i], mm = m0[i];
    for (int k = 0; k < STEPS; k++) mm = mm + g[i], want = want - mm * 0.5f;
    if (got[i] != want) {
      CHECK_MSG(0, "w[%d] = %g after %d steps, want %g", i, got[i], STEPS, want);
      break;
    }
  }
done:
  cxla_buffer_destroy(w);
  cxla_buffer_destroy(m);
  cxla_buffer_destroy(bg);
  cxla_executable_destroy(e);
}

TEST(gpu_buffers_cross_backend_arguments_and_copies) {
  cxla_executable *ge = compile_text(step_text, EMU, 0), *ce = compile_text(step_text, "cpu", 0);
  static float w0[N], g[N];
  for (int i = 0; i < N; i++) w0[i] = (float)i, g[i] = 2.0f;
  int64_t dims[1] = {N};
  cxla_buffer *hw = NULL, *hg = NULL, *dw = NULL, *dg = NULL, *gr = NULL, *cr = NULL, *back = NULL, *twin = NULL;
  CHECK_OK(cxla_buffer_from_data(test_ctx(), "cpu", CXLA_F32, 1, dims, w0, sizeof w0, &hw));
  CHECK_OK(cxla_buffer_wrap(test_ctx(), "cpu", CXLA_F32, 1, dims, g, sizeof g, &hg));
  if (!ge || !ce || !hw || !hg) goto done;
  CHECK(!strcmp(cxla_buffer_memory(hw), "host"));
  /* host buffers into a GPU executable: copied in for the call, the result on the device */
  cxla_buffer *hargs[2] = {hw, hg};
  CHECK_OK(cxla_executable_execute(ge, 2, hargs, &gr));
  CHECK(gr && gr->dev);
  /* explicit copies: to the device, within it, and back */
  CHECK_OK(cxla_buffer_copy_to(hw, EMU, &dw));
  CHECK_OK(cxla_buffer_copy_to(hg, EMU, &dg));
  CHECK(dw && dw->dev && dg && dg->dev);
  CHECK_OK(cxla_buffer_copy_to(dw, EMU, &twin));
  CHECK(twin && twin->dev && dw && twin->dev->addr[0] != dw->dev->addr[0]);
  /* device buffers into a cpu executable: copied out once */
  cxla_buffer *dargs[2] = {twin, dg};
  CHECK_OK(cxla_executable_execute(ce, 2, dargs, &cr));
  CHECK(cr && !cr->dev && !strcmp(cxla_buffer_memory(cr), "host"));
  CHECK_OK(cxla_buffer_copy_to(gr, "cpu", &back));
  cxla_literal *a = NULL, *b = NULL;
  if (back) CHECK_OK(cxla_buffer_to_literal(back, &a));
  if (cr) CHECK_OK(cxla_buffer_to_literal(cr, &b));
  if (a && b) {
    CHECK_NEAR(cxla_literal_get_f64(a->elems[0], 100), 99.0, 0);
    CHECK_NEAR(cxla_literal_get_f64(b->elems[0], 100), 99.0, 0);
    CHECK_NEAR(cxla_literal_get_f64(a->elems[1], 0), 2.0 * N, 0);
    CHECK_NEAR(cxla_literal_get_f64(b->elems[1], 0), 2.0 * N, 0);
  }
  cxla_literal_destroy(a);
  cxla_literal_destroy(b);
  /* the cpu backend has no device memory to report */
  cxla_memory_stats ms;
  CHECK(cxla_context_memory_stats(test_ctx(), "cpu", &ms) == CXLA_ERR_UNSUPPORTED);
  CHECK(strstr(cxla_context_errmsg(test_ctx()), "host memory"));
done:;
  cxla_buffer *all[] = {hw, hg, dw, dg, gr, cr, back, twin};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) cxla_buffer_destroy(all[i]);
  cxla_executable_destroy(ge);
  cxla_executable_destroy(ce);
}

TEST(gpu_buffers_consumed_and_empty_are_errors) {
  cxla_executable *e = compile_text(step_text, EMU, 1);
  static float w0[N];
  int64_t dims[1] = {N};
  cxla_buffer *w = NULL, *g = NULL, *r = NULL, *r2 = NULL, *el[2] = {NULL, NULL}, *c = NULL;
  CHECK_OK(cxla_buffer_from_data(test_ctx(), EMU, CXLA_F32, 1, dims, w0, sizeof w0, &w));
  CHECK_OK(cxla_buffer_from_data(test_ctx(), EMU, CXLA_F32, 1, dims, w0, sizeof w0, &g));
  if (!e || !w || !g) goto done;
  cxla_buffer *args[2] = {w, g};
  CHECK_OK(cxla_executable_execute(e, 2, args, &r));
  CHECK(cxla_executable_execute(e, 2, args, &r2) == CXLA_ERR_INVALID_ARGUMENT);
  CHECK(strstr(cxla_context_errmsg(test_ctx()), "argument 0 (parameter 'w') was donated"));
  CHECK(cxla_buffer_copy_to(w, "cpu", &c) == CXLA_ERR_INVALID_ARGUMENT && !c);
  CHECK(cxla_buffer_data(w) == NULL && cxla_buffer_size_bytes(w) == 0);
  if (r) CHECK_OK(cxla_buffer_untuple(r, 2, el));
  CHECK(r && cxla_buffer_memory(r) == NULL);
  CHECK(cxla_buffer_copy_to(r, EMU, &c) == CXLA_ERR_INVALID_ARGUMENT && !c);
  CHECK(strstr(cxla_context_errmsg(test_ctx()), "holds no value"));
  CHECK(cxla_buffer_copy_to(g, "tpu", &c) == CXLA_ERR_INVALID_ARGUMENT && !c);
  CHECK(el[1] && cxla_buffer_size_bytes(el[1]) == 4);
done:
  cxla_buffer_destroy(w);
  cxla_buffer_destroy(g);
  cxla_buffer_destroy(r);
  cxla_buffer_destroy(el[0]);
  cxla_buffer_destroy(el[1]);
  cxla_executable_destroy(e);
}

/* A full (emulated) GPU: the cache is given back to the driver and the allocation tried again;
 * when even that is not enough, CXLA_ERR_OUT_OF_MEMORY saying how much was asked for. */
TEST(gpu_buffers_out_of_device_memory) {
  cxla_context *ctx = NULL;
  CHECK_OK(cxla_context_create(&ctx));
  if (!ctx) return;
  enum { K = 1024 };
  static float data[64 * K / 4];
  int64_t d16[1] = {16 * K / 4}, d20[1] = {20 * K / 4}, d64[1] = {64 * K / 4};
  cx_emu_set_memory_limit(cx_emu_memory_allocated() + 40 * K);
  cxla_buffer *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  CHECK_OK(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, d16, data, 16 * K, &a));
  CHECK_OK(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, d16, data, 16 * K, &b));
  cxla_buffer_destroy(a); /* its block goes to the cache: 32 KiB still taken from the driver */
  cxla_memory_stats st;
  CHECK_OK(cxla_context_memory_stats(ctx, EMU, &st));
  CHECK(st.cached == 16 * K && st.in_use == 16 * K && st.driver_frees == 0);
  /* 20 KiB more does not fit beside 32: the cached 16 go back to the driver first */
  CHECK_OK(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, d20, data, 20 * K, &c));
  CHECK_OK(cxla_context_memory_stats(ctx, EMU, &st));
  CHECK(c && st.cached == 0 && st.driver_frees == 1 && st.in_use == 36 * K);
  CHECK_EQ_INT(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, d64, data, 64 * K, &d), CXLA_ERR_OUT_OF_MEMORY);
  CHECK(d == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "cuMemAlloc of 65536 bytes failed");
  cx_emu_set_memory_limit(0);
  cxla_buffer_destroy(b);
  cxla_buffer_destroy(c);
  cxla_context_destroy(ctx);
}

/* An executable's own device memory (its temporaries' arena, constants, workspaces) comes
 * from the device's caching allocator too, so the device's counters (JAX's
 * device.memory_stats()) show it; all of it goes back to the driver with the context. */
TEST(gpu_buffers_executables_memory_is_counted) {
  static const char text[] =
      "HloModule chain\n"
      "ENTRY main {\n"
      "  a = f32[64,64] parameter(0)\n"
      "  d = f32[64,64] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  e = f32[64,64] dot(d, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  c = f32[] constant(3)\n"
      "  cb = f32[64,64] broadcast(c), dimensions={}\n"
      "  ROOT r = f32[64,64] add(e, cb)\n"
      "}\n";
  size_t driver_before = cx_emu_memory_allocated();
  cxla_context *ctx = NULL;
  CHECK_OK(cxla_context_create(&ctx));
  if (!ctx) return;
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "chain.hlo", &m));
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = EMU;
  cxla_memory_stats live;
  cxla_executable *e = NULL;
  cxla_footprint f;
  if (m && cxla_compile(m, &o, &e) == CXLA_OK && cxla_executable_footprint(e, &f) == CXLA_OK) {
    CHECK(f.temp_bytes >= 64 * 64 * 4); /* d */
    CHECK_OK(cxla_context_memory_stats(ctx, EMU, &live));
    CHECK_MSG(live.in_use >= f.temp_bytes, "in use %lld, the executable's temporaries %lld", (long long)live.in_use,
              (long long)f.temp_bytes);
  } else {
    CHECK_MSG(0, "compile: %s", cxla_context_errmsg(ctx));
  }
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  cxla_context_destroy(ctx);
  CHECK(cx_emu_memory_allocated() == driver_before);
}
