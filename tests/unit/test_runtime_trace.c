/* test_runtime_trace.c — the Chrome trace: events from several threads, begin/end nesting,
 * names that need escaping, the written file parsed back by a small JSON checker written here
 * (the format is RFC 8259 JSON with a "traceEvents" array of "X" events), and --trace through
 * a context: compile phases and executions land in the file when the context is destroyed. */
#include <pthread.h>
#include <unistd.h>
#include "rt/rt.h"
#include "core/trace.h"
#include "test.h"
#include "util/file.h"

/* ---- a minimal JSON validator: returns the position after one value, or NULL ---- */
static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
  return p;
}
static const char *jvalue(const char *p, int depth);
static const char *jstring(const char *p) {
  if (*p++ != '"') return NULL;
  while (*p != '"') {
    if ((unsigned char)*p < 0x20) return NULL;
    if (*p == '\\') {
      p++;
      if (*p == 'u') {
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
        p += 4;
      } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
    }
    p++;
  }
  return p + 1;
}
static const char *jnumber(const char *p) {
  if (*p == '-') p++;
  if (*p == '0') p++;
  else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
  else return NULL;
  if (*p == '.') {
    p++;
    if (!(*p >= '0' && *p <= '9')) return NULL;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!(*p >= '0' && *p <= '9')) return NULL;
    while (*p >= '0' && *p <= '9') p++;
  }
  return p;
}
static const char *jvalue(const char *p, int depth) {
  if (depth > 64) return NULL;
  p = ws(p);
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    int obj = *p == '{';
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (obj) {
        if (!(p = jstring(ws(p)))) return NULL;
        p = ws(p);
        if (*p++ != ':') return NULL;
      }
      if (!(p = jvalue(p, depth + 1))) return NULL;
      p = ws(p);
      if (*p == ',') { p++; continue; }
      if (*p == close) return p + 1;
      return NULL;
    }
  }
  if (*p == '"') return jstring(p);
  if (!strncmp(p, "true", 4)) return p + 4;
  if (!strncmp(p, "false", 5)) return p + 5;
  if (!strncmp(p, "null", 4)) return p + 4;
  return jnumber(p);
}
static int json_valid(const char *text) {
  const char *end = jvalue(text, 0);
  return end && !*ws(end);
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static char *slurp(const char *path) {
  unsigned char *buf = NULL;
  size_t len;
  if (cx_read_file(test_ctx(), path, &buf, &len) != CXLA_OK) return NULL;
  return (char *)buf;
}

TEST(runtime_trace_json_checker_rejects_bad_json) {
  CHECK(json_valid("{\"a\":[1,2.5,-3e2,\"x\\n\",true,null,{}]}"));
  CHECK(!json_valid("{\"a\":[1,2,]}"));
  CHECK(!json_valid("{\"a\":1"));
  CHECK(!json_valid("{\"a\":\"tab\there\"}"));
  CHECK(!json_valid("{\"a\":01}"));
  CHECK(!json_valid("{\"a\":1} x"));
}

typedef struct {
  cx_trace *t;
  int id;
} rec_arg;
static void *record_many(void *arg) {
  rec_arg *r = arg;
  char name[32];
  for (int i = 0; i < 500; i++) {
    snprintf(name, sizeof name, "kernel.%d", i % 7);
    int64_t t0 = cx_trace_now();
    cx_trace_add(r->t, name, "kernel", t0, t0 + 1500, NULL);
  }
  return NULL;
}

TEST(runtime_trace_writes_valid_json) {
  char path[128];
  snprintf(path, sizeof path, "/tmp/cxla_trace_test_%d.json", (int)getpid());
  cx_trace *t = cx_trace_create(path);
  if (!t) { CHECK(t != NULL); return; }
  CHECK(!cx_trace_dirty(t));
  pthread_t th[4];
  rec_arg ra[4];
  for (int i = 0; i < 4; i++) {
    ra[i] = (rec_arg){t, i};
    pthread_create(&th[i], NULL, record_many, &ra[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  cx_trace_args a = {2, {"m", "n"}, {3, -4}};
  cx_trace_add(t, "we\"ird\\name\n\x01", "library", 1000, 2000, &a);
  cx_trace_begin(t, "outer", "control");
  cx_trace_begin(t, "copy.1", "copy");
  cx_trace_end(t);
  cx_trace_end(t);
  cx_trace_end(t); /* unmatched: ignored */
  int64_t dropped = -1;
  CHECK_EQ_INT(cx_trace_count(t, &dropped), 4 * 500 + 3);
  CHECK_EQ_INT(dropped, 0);
  CHECK(cx_trace_dirty(t));
  CHECK_OK(cx_trace_write(t, test_ctx()));
  CHECK(!cx_trace_dirty(t));
  char *text = slurp(path);
  CHECK(text != NULL);
  if (text) {
    CHECK_MSG(json_valid(text), "not valid JSON: %.300s", text);
    CHECK(!strncmp(text, "{\"traceEvents\":[", 16));
    CHECK_EQ_INT(count(text, "\"ph\":\"X\""), 4 * 500 + 3);
    CHECK_EQ_INT(count(text, "\"cat\":\"kernel\""), 2000);
    CHECK_EQ_INT(count(text, "\"dur\":1.500"), 2000); /* 1500 ns is 1.5 us */
    CHECK_STR_CONTAINS(text, "\"name\":\"we\\\"ird\\\\name\\u000a\\u0001\"");
    CHECK_STR_CONTAINS(text, "\"ts\":1.000,\"dur\":1.000");
    CHECK_STR_CONTAINS(text, "\"args\":{\"m\":3,\"n\":-4}");
    CHECK_STR_CONTAINS(text, "\"name\":\"outer\",\"cat\":\"control\"");
    CHECK_STR_CONTAINS(text, "\"name\":\"copy.1\",\"cat\":\"copy\"");
    /* the four recording threads got distinct ids (other tests' threads took earlier ones) */
    long seen[8];
    int tids = 0;
    for (const char *p = text; (p = strstr(p, "\"cat\":\"kernel\"")) && tids < 8; p++) {
      const char *q = strstr(p, "\"tid\":");
      long id = q ? strtol(q + 6, NULL, 10) : -1;
      int known = 0;
      for (int i = 0; i < tids; i++) known |= seen[i] == id;
      if (!known) seen[tids++] = id;
    }
    CHECK_MSG(tids == 4, "%d distinct thread ids", tids);
  }
  free(text);
  cx_trace_destroy(t);
  unlink(path);
}

TEST(runtime_trace_write_error_is_reported) {
  cx_trace *t = cx_trace_create("/nonexistent-dir/x/trace.json");
  cx_trace_add(t, "k", "kernel", 0, 1, NULL);
  CHECK_EQ_INT(cx_trace_write(t, test_ctx()), CXLA_ERR_IO);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cannot write trace /nonexistent-dir/x/trace.json");
  cx_trace_destroy(t);
}

TEST(runtime_trace_rt_entry_points) {
  cx_trace *t = cx_trace_create("/dev/null");
  cx_rt rt = {0};
  const char *names[] = {"fusion.1", "copy.2", "while.3"};
  rt.names = names;
  rt.trace = t;
  cx_rt_trace_begin(&rt, 2);
  cx_rt_trace_begin(&rt, 1);
  cx_rt_trace_end(&rt, 1);
  cx_rt_trace_end(&rt, 2);
  CHECK_EQ_INT(cx_trace_count(t, NULL), 2);
  cx_trace_destroy(t);
}

static const char *module_text =
    "HloModule traced\n\nENTRY main {\n  x = f32[4]{0} parameter(0)\n  ROOT y = f32[4]{0} add(x, x)\n}\n";

/* A fresh context tracing to path (a per-process name made from `tag`), with `flags` too, and
 * `text` parsed in it; NULL context on failure. */
static cxla_context *traced(const char *tag, const char *flags, const char *text, char *path, size_t n,
                            cxla_module **m) {
  char flag[300];
  snprintf(path, n, "/tmp/cxla_trace_%s_%d.json", tag, (int)getpid());
  snprintf(flag, sizeof flag, "--trace=%s %s", path, flags);
  unlink(path);
  cxla_context *ctx = NULL;
  *m = NULL;
  CHECK_OK(cxla_context_create(&ctx));
  if (!ctx) return NULL;
  CHECK_OK(cxla_context_set_flags(ctx, flag));
  CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "traced.hlo", m));
  return ctx;
}

TEST(runtime_trace_through_context) {
  char path[128];
  cxla_module *m = NULL;
  cxla_context *ctx = traced("ctx", "", module_text, path, sizeof path, &m);
  if (!ctx) return;
  int64_t d = 4;
  cxla_literal *x = cxla_literal_create(ctx, CXLA_F32, 1, &d), *out = NULL;
  for (int i = 0; i < 3; i++) {
    CHECK_OK(cxla_module_run(m, NULL, 1, &x, &out));
    cxla_literal_destroy(out);
  }
  cxla_literal_destroy(x);
  cxla_module_destroy(m);
  CHECK(access(path, F_OK) != 0); /* written when the context goes */
  cxla_context_destroy(ctx);
  char *text = slurp(path);
  CHECK_MSG(text != NULL, "no trace file at %s", path);
  if (text) {
    CHECK_MSG(json_valid(text), "not valid JSON: %.300s", text);
    CHECK_EQ_INT(count(text, "\"cat\":\"execute\""), 3);
    CHECK_STR_CONTAINS(text, "\"name\":\"verify\",\"cat\":\"compile\"");
    CHECK_STR_CONTAINS(text, "\"name\":\"compile traced\",\"cat\":\"compile\"");
    CHECK_EQ_INT(count(text, "\"name\":\"cache hit\""), 2); /* runs 2 and 3 reuse the compile */
  }
  free(text);
  unlink(path);
}

/* ---- cx_rt_interp_op: traced, failures stick ---- */
static int fallback_calls;
static int fake_fallback(void *exe, const struct cx_replica *rep, int32_t index, void **args, char *errmsg, size_t errlen) {
  (void)rep;
  fallback_calls++;
  int mode = *(int *)exe;
  if (mode == 0) { /* success: out = 2 * in */
    *(float *)args[0] = 2 * *(float *)args[1];
    return 0;
  }
  if (mode == 1) snprintf(errmsg, errlen, "instruction %d: while loop exceeded the limit", (int)index);
  return mode == 1 ? CXLA_ERR_RUNTIME : mode == 2 ? CXLA_ERR_OUT_OF_MEMORY : -7;
}

TEST(runtime_interp_op_calls_fallback_and_sticks) {
  cx_trace *t = cx_trace_create("/dev/null");
  int mode = 0;
  float in = 3, out = 0;
  void *args[2] = {&out, &in};
  const char *names[] = {"interp: sort.4"};
  cx_rt rt = {.trace = t, .names = names, .exe = &mode, .fallback = fake_fallback};
  fallback_calls = 0;
  cx_rt_interp_op(&rt, 4, args, 0);
  CHECK_EQ_INT(rt.status, CXLA_OK);
  CHECK_NEAR(out, 6, 0);
  CHECK_EQ_INT(cx_trace_count(t, NULL), 1);
  mode = 1;
  cx_rt_interp_op(&rt, 9, args, 0);
  CHECK_EQ_INT(rt.status, CXLA_ERR_RUNTIME);
  CHECK_STR_CONTAINS(rt.errmsg, "instruction 9: while loop exceeded the limit");
  mode = 0; /* a later call of the same execution does nothing */
  cx_rt_interp_op(&rt, 4, args, 0);
  CHECK_EQ_INT(fallback_calls, 2);
  cx_rt r2 = {.exe = &mode, .fallback = fake_fallback, .names = names};
  mode = 2; /* a status code passes through; a message is made up when none was given */
  cx_rt_interp_op(&r2, 4, args, 0);
  CHECK_EQ_INT(r2.status, CXLA_ERR_OUT_OF_MEMORY);
  CHECK_STR_CONTAINS(r2.errmsg, "interp: sort.4: interpreter fallback failed");
  cx_rt r3 = {.exe = &mode, .fallback = fake_fallback};
  mode = 3; /* anything else is a runtime error */
  cx_rt_interp_op(&r3, 4, args, 0);
  CHECK_EQ_INT(r3.status, CXLA_ERR_RUNTIME);
  cx_rt r4 = {0}; /* no fallback given: an internal error, not a crash */
  cx_rt_interp_op(&r4, 4, args, 0);
  CHECK_EQ_INT(r4.status, CXLA_ERR_INTERNAL);
  cx_trace_destroy(t);
}

/* The cpu backend's timeline: real compile spans (no phase drawn from a total, no count drawn
 * as a time), one event per LLVM module, kernels carrying the op_name and source line of the
 * program that made them (source_file/source_line, or stack_frame_id through the module's
 * StackFrames tables), and each pool thread's share of a big kernel on its own track. */
static const char *cpu_module_text =
    "HloModule traced_cpu\n\nFileNames\n1 \"/home/u/model.py\"\n\nFunctionNames\n1 \"loss\"\n\n"
    "FileLocations\n1 {file_name_id=1 function_name_id=1 line=42 end_line=42 column=3 end_column=9}\n\n"
    "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\n"
    "ENTRY main {\n  x = f32[1048576]{0} parameter(0)\n"
    "  m = f32[1048576]{0} multiply(x, x), metadata={op_name=\"jit(f)/mul\" source_file=\"/home/u/model.py\" source_line=7}\n"
    "  t = f32[1024,1024]{1,0} reshape(x)\n"
    "  d = f32[1024,1024]{1,0} dot(t, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
    "metadata={op_name=\"jit(f)/dot_general\" stack_frame_id=1}\n"
    "  ROOT r = (f32[1048576]{0}, f32[1024,1024]{1,0}) tuple(m, d)\n}\n";

TEST(runtime_trace_cpu_timeline) {
  char path[128];
  cxla_module *m = NULL;
  cxla_context *ctx = traced("cpu", "--threads=2", cpu_module_text, path, sizeof path, &m);
  if (!ctx) return;
  int64_t d = 1048576;
  cxla_literal *x = cxla_literal_create(ctx, CXLA_F32, 1, &d), *out = NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  if (m && x) CHECK_OK(cxla_module_run(m, &o, 1, &x, &out));
  cxla_literal_destroy(out);
  cxla_literal_destroy(x);
  cxla_module_destroy(m);
  cxla_context_destroy(ctx);
  char *text = slurp(path);
  CHECK_MSG(text != NULL, "no trace file at %s", path);
  if (text) {
    CHECK_MSG(json_valid(text), "not valid JSON: %.300s", text);
    static const char *spans[] = {"\"name\":\"passes\",\"cat\":\"compile\"", "\"name\":\"buffers\",\"cat\":\"compile\"",
                                  "\"name\":\"emit\",\"cat\":\"compile\"", "\"name\":\"llvm\",\"cat\":\"compile\"",
                                  "\"name\":\"link\",\"cat\":\"compile\"", "\"name\":\"opt module 0\"",
                                  "\"name\":\"codegen module 0\""};
    for (int i = 0; i < 7; i++) CHECK_STR_CONTAINS(text, spans[i]);
    CHECK(!strstr(text, "from_stats") && !strstr(text, "\"name\":\"llvm_threads\"") &&
          !strstr(text, "\"name\":\"fallbacks\""));
    CHECK_STR_CONTAINS(text, "\"op_name\":\"jit(f)/mul\",\"source\":\"model.py:7\"");
    CHECK_STR_CONTAINS(text, "\"op_name\":\"jit(f)/dot_general\",\"source\":\"model.py:42\"");
    CHECK(count(text, "\"cat\":\"chunks\"") >= 1);
  }
  free(text);
  unlink(path);
}
