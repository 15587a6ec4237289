/* test_gpu_ptx.c — the GPU backend's PTX, checked without a GPU: the PTX target chosen for a
 * compute capability and driver, the PTX's structure (entries, the
 * kernel ABI, global memory, no calls), refusals at compile time, and every module of
 * tests/hlo compiled for sm_75, sm_80 and sm_90 and accepted by the CUDA toolkit's ptxas
 * (skipped, saying so, where the toolkit is absent: $CXLA_PTXAS, else
 * /usr/local/cuda/bin/ptxas, else ptxas on PATH). */
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/gpu/gpu_build.h"
#include "codegen_harness.h"
#include "ir/verify.h"
#include "text/hlo.h"

static void pick(int major, int minor, int driver, const char *sm, int ptx) {
  cx_nvptx_arch a;
  const char *why = NULL;
  int r = cx_nvptx_pick(major, minor, driver, &a, &why);
  CHECK_MSG(r == 0, "cc %d.%d, driver %d: refused: %s", major, minor, driver, why ? why : "");
  if (r) return;
  CHECK_MSG(!strcmp(a.sm, sm), "cc %d.%d, driver %d: %s, expected %s", major, minor, driver, a.sm, sm);
  CHECK_MSG(a.ptx == ptx, "cc %d.%d, driver %d: PTX ISA %d, expected %d", major, minor, driver, a.ptx, ptx);
  char feat[16];
  snprintf(feat, sizeof feat, "+ptx%d", ptx);
  CHECK_STR_CONTAINS(a.features, feat);
}

TEST(gpu_arch_pick) {
  pick(7, 5, 12040, "sm_75", 84);  /* T4 under CUDA 12.4 */
  pick(8, 0, 0, "sm_80", 85);      /* A100, driver version unknown: the newest ISA */
  pick(8, 6, 12050, "sm_86", 85);
  pick(8, 7, 11040, "sm_87", 74);
  pick(8, 9, 12000, "sm_89", 80);
  pick(8, 8, 12000, "sm_87", 80);  /* a capability cxla does not know: the newest below it */
  pick(9, 0, 12080, "sm_90a", 85); /* H100: its own arch-specific target; ISA capped at 8.5 */
  pick(9, 0, 11080, "sm_90", 78);  /* sm_90a needs PTX 8.0 */
  pick(10, 0, 12080, "sm_90", 85); /* newer than cxla: PTX for sm_90, JIT-compiled by the driver */
  pick(12, 0, 13000, "sm_90", 85);
  pick(8, 9, 11070, "sm_87", 77);  /* sm_89 needs PTX 7.8 */
  pick(8, 0, 11000, "sm_80", 70);
  pick(8, 6, 11000, "sm_80", 70);
  pick(7, 5, 10000, "sm_75", 63);
  cx_nvptx_arch a;
  const char *why = NULL;
  CHECK_EQ_INT(cx_nvptx_pick(7, 0, 12040, &a, &why), -1);
  CHECK_STR_CONTAINS(why, "compute capability 7.0 is older than the oldest cxla supports (7.5)");
  CHECK_EQ_INT(cx_nvptx_pick(8, 0, 9020, &a, &why), -1);
  CHECK_STR_CONTAINS(why, "the CUDA driver (version 9.2) is too old");
  CHECK_EQ_INT(cx_nvptx_driver_ptx(12050), 85);
  CHECK_EQ_INT(cx_nvptx_driver_ptx(11080), 78);
  CHECK_EQ_INT(cx_nvptx_driver_ptx(13000), 90);
  CHECK_EQ_INT(cx_nvptx_driver_ptx(9000), 0);
  CHECK_EQ_INT(cx_nvptx_arch_named("sm_90a", &a), 0);
  CHECK(!strcmp(a.sm, "sm_90a") && a.ptx == 85);
  CHECK_EQ_INT(cx_nvptx_arch_named("sm_70", &a), -1);
}

static const char *g_libdevice; /* --gpu-libdevice for build(), NULL: the default search */

static cxla_status build(const char *text, const char *sm, unsigned mode, cx_gpu_prog *p) {
  cx_nvptx_arch arch;
  memset(p, 0, sizeof *p);
  if (cx_nvptx_arch_named(sm, &arch)) return CXLA_ERR_INVALID_ARGUMENT;
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  if (s != CXLA_OK) {
    cx_module_free(m);
    return s;
  }
  cx_flags f;
  cx_flags_init(&f);
  if (g_libdevice && !(f.gpu_libdevice = cx_strdup(g_libdevice))) s = CXLA_ERR_OUT_OF_MEMORY;
  if (s == CXLA_OK) s = cx_gpu_build(test_ctx(), m, &f, &arch, mode, p);
  else cx_module_free(m);
  cx_flags_free(&f);
  return s;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

TEST(gpu_ptx_structure) {
  /* a loop fusion (exp, sqrt, a broadcast constant) and a row reduction */
  const char *text = "HloModule s\nsum {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b)\n}\n"
                     "ENTRY e {\n x = f32[64,100] parameter(0)\n c = f32[100] iota(), iota_dimension=0\n"
                     " cb = f32[64,100] broadcast(c), dimensions={1}\n ex = f32[64,100] exponential(x)\n"
                     " sq = f32[64,100] sqrt(ex)\n y = f32[64,100] add(sq, cb)\n z = f32[] constant(0)\n"
                     " r = f32[64] reduce(y, z), dimensions={1}, to_apply=sum\n ROOT t = (f32[64,100], f32[64]) tuple(y, r)\n}\n";
  cx_gpu_prog p;
  CHECK_OK(build(text, "sm_80", 0, &p));
  if (!p.ptx) {
    cx_gpu_prog_free(&p);
    return;
  }
  CHECK_STR_CONTAINS(p.ptx, ".version 8.5");
  CHECK_STR_CONTAINS(p.ptx, ".target sm_80");
  CHECK_STR_CONTAINS(p.ptx, ".address_size 64");
  CHECK(p.nkernels >= 1);
  CHECK_EQ_INT(count(p.ptx, ".visible .entry "), p.nkernels);
  for (int i = 0; i < p.nkernels; i++) {
    char entry[96];
    snprintf(entry, sizeof entry, ".entry %s(", p.kernels[i]);
    CHECK_STR_CONTAINS(p.ptx, entry);
  }
  /* thread index -> element; buffers in global memory; nothing called */
  CHECK_STR_CONTAINS(p.ptx, "%ctaid.x");
  CHECK_STR_CONTAINS(p.ptx, "%ntid.x");
  CHECK_STR_CONTAINS(p.ptx, "%tid.x");
  CHECK_STR_CONTAINS(p.ptx, "ld.global");
  CHECK_STR_CONTAINS(p.ptx, "st.global");
  CHECK_STR_CONTAINS(p.ptx, "sqrt.rn.f32");
  CHECK(!strstr(p.ptx, "call") && !strstr(p.ptx, ".extern"));
  /* every launch: its kernel, a thread per element, outputs then operands */
  int launches = 0;
  for (int i = 0; i < p.nsteps; i++) {
    const cx_gpu_step *s = &p.steps[i];
    if (s->kind != CX_GPU_LAUNCH) continue;
    launches++;
    CHECK(s->kernel >= 0 && s->kernel < p.nkernels && s->total > 0 && s->nargs >= 2);
    for (int k = 0; k < s->nargs; k++) CHECK(s->slots[k] >= 0 && s->slots[k] < p.bufs.nslots);
  }
  CHECK_EQ_INT(launches, p.nkernels);
  unsigned block, grid;
  cx_gpu_grid(6400, &block, &grid);
  CHECK(block * grid >= 6400 && (block * grid - 6400) < block);
  cx_gpu_grid(0, &block, &grid);
  CHECK(grid == 1);
  cx_gpu_prog_free(&p);
}

/* A loop the data counts, planned as a graph (CX_GPU_GRAPHS: a driver with conditional nodes):
 * the control kernel is one more .entry, calling the device runtime's extern; without the bit
 * (an older driver) the PTX has neither and the loop is not marked. */
TEST(gpu_ptx_graph_control_kernel) {
  const char *text = "HloModule g\ncond {\n p = (f32[], f32[8]) parameter(0)\n s = f32[] get-tuple-element(p), index=0\n"
                     " n = f32[] constant(5)\n ROOT lt = pred[] compare(s, n), direction=LT\n}\nbody {\n"
                     " p = (f32[], f32[8]) parameter(0)\n s = f32[] get-tuple-element(p), index=0\n"
                     " x = f32[8] get-tuple-element(p), index=1\n h = f32[] constant(1.5)\n j = f32[] add(s, h)\n"
                     " y = f32[8] sine(x)\n ROOT o = (f32[], f32[8]) tuple(j, y)\n}\nENTRY e {\n x = f32[8] parameter(0)\n"
                     " z = f32[] constant(0)\n t = (f32[], f32[8]) tuple(z, x)\n"
                     " w = (f32[], f32[8]) while(t), condition=cond, body=body\n ROOT r = f32[8] get-tuple-element(w), index=1\n}\n";
  for (int graphs = 0; graphs < 2; graphs++) {
    cx_gpu_prog p;
    CHECK_OK(build(text, "sm_80", graphs ? CX_GPU_GRAPHS : 0, &p));
    if (!p.ptx) {
      cx_gpu_prog_free(&p);
      return;
    }
    int w = 0;
    while (w < p.nsteps && p.steps[w].kind != CX_GPU_WHILE) w++;
    CHECK(w < p.nsteps && p.steps[w].trips < 0);
    CHECK_EQ_INT(count(p.ptx, ".visible .entry "), p.nkernels);
    if (count(p.ptx, ".visible .entry ") != p.nkernels) /* seen once in a fresh root, not since: say which */
      for (int k = 0; k < p.nkernels; k++) {
        char want[160];
        snprintf(want, sizeof want, ".visible .entry %s(", p.kernels[k]);
        printf("    graphs=%d kernel %d %s: %s\n", graphs, k, p.kernels[k], strstr(p.ptx, want) ? "in the PTX" : "NOT in the PTX");
      }
    if (graphs) {
      CHECK(w < p.nsteps && p.steps[w].graph && p.steps[w].ctl == 1);
      CHECK_EQ_INT(p.nloops_graph, 1);
      CHECK(p.graph_kernel >= 0 && !strcmp(p.kernels[p.graph_kernel], "cxla_graph_ctl"));
      CHECK_STR_CONTAINS(p.ptx, ".entry cxla_graph_ctl(");
      CHECK_STR_CONTAINS(p.ptx, ".extern .func cudaGraphSetConditional");
    } else {
      CHECK(w < p.nsteps && !p.steps[w].graph);
      CHECK_EQ_INT(p.graph_kernel, -1);
      CHECK(!strstr(p.ptx, "cudaGraphSetConditional") && !strstr(p.ptx, ".extern"));
    }
    cx_gpu_prog_free(&p);
  }
}

/* A loop fusion of 4 elements a thread loads and stores 16 bytes at a time; a row reduction
 * exchanges lanes with shfl.sync.bfly; a dot is a cuBLASLt step, not PTX. */
TEST(gpu_ptx_vector_and_warp) {
  const char *ew = "HloModule v\nENTRY e {\n x = f32[64,256] parameter(0)\n y = f32[64,256] parameter(1)\n"
                   " a = f32[64,256] add(x, y)\n ROOT t = f32[64,256] tanh(a)\n}\n";
  cx_gpu_prog p;
  CHECK_OK(build(ew, "sm_90", 0, &p));
  if (p.ptx) {
    CHECK_STR_CONTAINS(p.ptx, "ld.global.v4.f32");
    CHECK_STR_CONTAINS(p.ptx, "st.global.v4.f32");
    int vec = 0;
    for (int i = 0; i < p.nsteps; i++) vec |= p.steps[i].kind == CX_GPU_LAUNCH && p.steps[i].vec == 4;
    CHECK(vec);
  }
  cx_gpu_prog_free(&p);
  const char *rd = "HloModule w\nsum {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b)\n}\n"
                   "ENTRY e {\n x = f32[64,256] parameter(0)\n z = f32[] constant(0)\n"
                   " r = f32[64] reduce(x, z), dimensions={1}, to_apply=sum\n w = f32[256,8] parameter(1)\n"
                   " d = f32[64,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                   " ROOT o = (f32[64], f32[64,8]) tuple(r, d)\n}\n";
  CHECK_OK(build(rd, "sm_90", 0, &p));
  if (p.ptx) {
    CHECK_STR_CONTAINS(p.ptx, "shfl.sync.bfly.b32");
    CHECK_EQ_INT(p.ngemms, 1);
  }
  cx_gpu_prog_free(&p);
}

/* f64 sine is a call of libdevice's __nv_sin: linked in (when the toolkit is here) so that the
 * PTX calls nothing; a wrong --gpu-libdevice is refused at compile time naming the function */
TEST(gpu_libdevice_math) {
  const char *sine = "HloModule s\nENTRY e {\n x = f64[8] parameter(0)\n ROOT r = f64[8] sine(x)\n}\n";
  cx_gpu_prog p;
  char home[512] = "";
  if (getenv("CUDA_HOME")) snprintf(home, sizeof home, "%s/nvvm/libdevice/libdevice.10.bc", getenv("CUDA_HOME"));
  if ((home[0] && !access(home, R_OK)) || !access("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc", R_OK) ||
      !access("/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc", R_OK)) {
    CHECK_OK(build(sine, "sm_80", 0, &p));
    if (p.ptx) {
      CHECK_EQ_INT(count(p.ptx, ".visible .entry"), 1);
      CHECK_EQ_INT(count(p.ptx, ".extern"), 0); /* calls only the module's own .func */
      CHECK_EQ_INT(count(p.ptx, "__nv_"), 0);
    }
    cx_gpu_prog_free(&p);
  } else {
    printf("    (no CUDA toolkit: libdevice's linking is not checked here)\n");
  }
  g_libdevice = "/nonexistent/libdevice.10.bc";
  CHECK_EQ_INT(build(sine, "sm_80", 0, &p), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "__nv_sin needs CUDA's libdevice: cannot read /nonexistent/libdevice.10.bc");
  cx_gpu_prog_free(&p);
  char notbc[512];
  snprintf(notbc, sizeof notbc, "%s/tests/hlo/ops/add.hlo", getenv("CXLA_SRC") ? getenv("CXLA_SRC") : ".");
  g_libdevice = notbc;
  CHECK_EQ_INT(build(sine, "sm_80", 0, &p), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "is not LLVM bitcode");
  cx_gpu_prog_free(&p);
  g_libdevice = NULL;
}

static int any_callback(void *user, uint64_t id, int nargs, const cxla_host_value *args, int nres,
                        cxla_host_value *res, char *err, size_t errlen) {
  (void)user, (void)id, (void)nargs, (void)args, (void)nres, (void)res;
  snprintf(err, errlen, "not to be called");
  return 1;
}

static int any_callback_known(void *user, uint64_t id, char *name, size_t n) {
  (void)user, (void)id, (void)name, (void)n;
  return 1;
}

TEST(gpu_refuses_at_compile_time) {
  cx_gpu_prog p;
  /* a replica-id (a collective: no GPU transport) next to a dot (a cuBLASLt step, no kernel) */
  const char *mixed = "HloModule d\nENTRY e {\n a = f32[8,8] parameter(0)\n"
                     " b = f32[8,8] parameter(1)\n d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                     " r = u32[] replica-id()\n"
                     " ROOT t = (f32[8,8], u32[]) tuple(d, r)\n}\n";
  CHECK_EQ_INT(build(mixed, "sm_80", 0, &p), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "(replica-id) cannot run on the GPU yet");
  cx_gpu_prog_free(&p);
  CHECK_OK(build(mixed, "sm_80", 1, &p)); /* lenient: left out and counted */
  CHECK_EQ_INT(p.ngemms, 1);
  CHECK(p.nskipped >= 1 && p.first_skip && p.ptx);
  cx_gpu_prog_free(&p);
  /* an op ops.def's gpu column refuses: the refusal gives the row's reason */
  const char *pid = "HloModule g\nENTRY e {\n ROOT r = u32[] partition-id()\n}\n";
  CHECK_EQ_INT(build(pid, "sm_80", 0, &p), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "(partition-id) cannot run on the GPU yet: ");
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), cx_op_gpu_why(CX_OP_PARTITION_ID));
  cx_gpu_prog_free(&p);
  /* library steps build without a GPU or its libraries (they are opened when loading) */
  const char *lib = "HloModule f\nENTRY e {\n x = c64[8] parameter(0)\n a = f64[3,3] parameter(1)\n"
                    " f = c64[8] fft(x), fft_type=FFT, fft_length={8}\n l = f64[3,3] cholesky(a), lower=true\n"
                    " ROOT t = (c64[8], f64[3,3]) tuple(f, l)\n}\n";
  CHECK_OK(build(lib, "sm_80", 0, &p));
  CHECK_EQ_INT(p.nffts, 1);
  CHECK_EQ_INT(p.nlinalg, 1);
  cx_gpu_prog_free(&p);
  /* a host callback the process's dispatcher knows: a host step on the GPU too */
  cxla_host_callbacks cb = {any_callback, any_callback_known, NULL};
  cxla_host_callbacks_set(&cb);
  const char *hcb = "HloModule h\nENTRY e {\n x = f32[4] parameter(0)\n ROOT y = f32[4] custom-call(x), "
                    "custom_call_target=\"cxla_host_callback\", backend_config={callback_id = 1 : ui64}\n}\n";
  CHECK_OK(build(hcb, "sm_80", 0, &p)); /* a host step of the sequence (gpu_host.c): no kernel */
  CHECK(p.nsteps == 1 && p.steps[0].kind == CX_GPU_CALLBACK && p.nkernels == 0);
  cx_gpu_prog_free(&p);
  cxla_host_callbacks_set(NULL);
}

/* ---- every corpus module through ptxas ---- */

static const char *find_ptxas(void) {
  static char path[1024];
  const char *env = getenv("CXLA_PTXAS");
  if (env && *env) return access(env, X_OK) ? NULL : env;
  if (!access("/usr/local/cuda/bin/ptxas", X_OK)) return "/usr/local/cuda/bin/ptxas";
  const char *pathvar = getenv("PATH");
  for (const char *p = pathvar; p && *p;) {
    const char *c = strchr(p, ':');
    int n = c ? (int)(c - p) : (int)strlen(p);
    snprintf(path, sizeof path, "%.*s/ptxas", n, p);
    if (n && !access(path, X_OK)) return path;
    p = c ? c + 1 : NULL;
  }
  return NULL;
}

/* ptxas -arch=sm file: 0 when it accepts the PTX; its messages go to log. PTX that calls an
 * extern function (the device runtime's cudaGraphSetConditional, which the driver's JIT
 * resolves when it loads the module) is compiled with --compile-only: ptxas alone links
 * nothing and would call the symbol unresolved. */
static int ptxas(const char *exe, const char *sm, const char *file, const char *log, int compile_only) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    FILE *f = freopen(log, "w", stderr);
    if (f && dup2(fileno(stderr), 1) >= 0) {
      char arch[32];
      snprintf(arch, sizeof arch, "-arch=%s", sm);
      if (compile_only) execl(exe, exe, arch, "--compile-only", file, "-o", "/dev/null", (char *)NULL);
      else execl(exe, exe, arch, file, "-o", "/dev/null", (char *)NULL);
    }
    _exit(127);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) < 0) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? cx_malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    cx_free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = 0;
  fclose(f);
  return buf;
}

typedef struct corpus_stats {
  int modules, kernels, skipped, accepted, refused_build, graphs;
} corpus_stats;

static const char *const k_targets[] = {"sm_75", "sm_80", "sm_90"};

static void check_module(const char *exe, const char *path, const char *tmp, corpus_stats *cs) {
  char *text = slurp(path);
  if (!text || strstr(text, "// ERROR:")) {
    cx_free(text);
    return;
  }
  cs->modules++;
  for (size_t t = 0; t < CX_ARRAY_LEN(k_targets); t++) {
    cx_gpu_prog p;
    /* as for a driver that runs conditional nodes: loops and conditionals as graphs */
    cxla_status s = build(text, k_targets[t], CX_GPU_LENIENT | CX_GPU_GRAPHS, &p);
    if (s != CXLA_OK) {
      /* what the cpu pipeline itself refuses (an unsupported type, ...) is not the PTX's doing */
      if (s != CXLA_ERR_UNSUPPORTED) test_fail(__FILE__, __LINE__, "%s (%s): %s", path, k_targets[t], cxla_context_errmsg(test_ctx()));
      else if (!t) cs->refused_build++;
      cx_gpu_prog_free(&p);
      break;
    }
    if (!t) {
      cs->kernels += p.nkernels;
      cs->skipped += p.nskipped;
    }
    char file[512], log[512];
    snprintf(file, sizeof file, "%s/m.ptx", tmp);
    snprintf(log, sizeof log, "%s/ptxas.log", tmp);
    FILE *f = fopen(file, "w");
    if (f) {
      fputs(p.ptx, f);
      fclose(f);
    }
    int rc = f ? ptxas(exe, k_targets[t], file, log, strstr(p.ptx, ".extern .func") != NULL) : -1;
    if (p.graph_kernel >= 0) cs->graphs++;
    if (rc) {
      char *msg = slurp(log);
      test_fail(__FILE__, __LINE__, "ptxas -arch=%s refuses the PTX of %s (exit %d): %.600s", k_targets[t], path, rc,
                msg ? msg : "");
      cx_free(msg);
    } else {
      cs->accepted++;
    }
    cx_gpu_prog_free(&p);
  }
  cx_free(text);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void check_dir(const char *exe, const char *sub, const char *tmp, corpus_stats *cs) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/hlo/%s", test_srcdir(), sub);
  DIR *d = opendir(dir);
  if (!d) {
    test_fail(__FILE__, __LINE__, "cannot open %s", dir);
    return;
  }
  char *names[512];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 512)
    if (strstr(e->d_name, ".hlo")) names[n++] = cx_strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, by_name);
  const char *filter = getenv("CXLA_GPU_CORPUS");
  for (int i = 0; i < n; i++) {
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (!filter || strstr(path, filter)) check_module(exe, path, tmp, cs);
    cx_free(names[i]);
  }
}

TEST(gpu_ptx_corpus_ptxas) {
  const char *exe = find_ptxas();
  if (!exe) {
    printf("    skipped: no ptxas (set CXLA_PTXAS or install the CUDA toolkit in /usr/local/cuda)\n");
    return;
  }
  char tmp[] = "/tmp/cxla_ptx.XXXXXX";
  if (!mkdtemp(tmp)) {
    test_fail(__FILE__, __LINE__, "mkdtemp failed");
    return;
  }
  corpus_stats cs = {0};
  /* the emitter's convolution kernels (what runs where cuDNN declines) through ptxas too */
  const char *dnn = getenv("CXLA_CUDNN");
  char *saved = dnn ? cx_strdup(dnn) : NULL;
  setenv("CXLA_CUDNN", "off", 1);
  /* every folder of tests/hlo but errors/ (modules that must not compile) */
  char root[1024];
  snprintf(root, sizeof root, "%s/tests/hlo", test_srcdir());
  DIR *d = opendir(root);
  CHECK_MSG(d, "cannot open %s", root);
  char *dirs[64];
  int nd = 0;
  for (struct dirent *e; d && (e = readdir(d)) && nd < 64;)
    if (e->d_name[0] != '.' && strcmp(e->d_name, "errors") && !strchr(e->d_name, '.')) dirs[nd++] = cx_strdup(e->d_name);
  if (d) closedir(d);
  qsort(dirs, (size_t)nd, sizeof *dirs, by_name);
  for (int i = 0; i < nd; i++) {
    check_dir(exe, dirs[i], tmp, &cs);
    cx_free(dirs[i]);
  }
  if (saved) setenv("CXLA_CUDNN", saved, 1);
  else unsetenv("CXLA_CUDNN");
  cx_free(saved);
  char f[600];
  snprintf(f, sizeof f, "%s/m.ptx", tmp);
  unlink(f);
  snprintf(f, sizeof f, "%s/ptxas.log", tmp);
  unlink(f);
  rmdir(tmp);
  printf("    %d modules: %d GPU kernels; %d PTX modules accepted by %s for sm_75/sm_80/sm_90 (%d with graphs' control "
         "kernels); %d instructions not yet GPU-ready; %d modules refused before code generation\n",
         cs.modules, cs.kernels, cs.accepted, exe, cs.graphs, cs.skipped, cs.refused_build);
  if (!getenv("CXLA_GPU_CORPUS")) CHECK(cs.kernels > 300 && cs.accepted > 600);
}

/* rng (its kernel and, inside a loop, the run counter's), a long row's top-k (tiles, merge)
 * and an outfeed (a host step, no kernel) in one module: the steps, the rounding of the rng's
 * f64 arithmetic (each operation rounded to nearest, none approximate: what makes it the
 * interpreter's bits), and ptxas for sm_75, sm_80 and sm_90 */
TEST(gpu_ptx_rng_topk_and_host_steps) {
  const char *text =
      "HloModule h\ncond {\n p = (s32[], f64[5]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
      " n = s32[] constant(3)\n ROOT c = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n p = (s32[], f64[5]) parameter(0)\n i = s32[] get-tuple-element(p), index=0\n"
      " x = f64[5] get-tuple-element(p), index=1\n a = f64[] constant(0)\n b = f64[] constant(1)\n"
      " g = f64[5] rng(a, b), distribution=rng_normal\n y = f64[5] add(x, g)\n one = s32[] constant(1)\n"
      " i2 = s32[] add(i, one)\n ROOT t = (s32[], f64[5]) tuple(i2, y)\n}\n"
      "ENTRY e {\n x = f32[2,20000] parameter(0)\n k = (f32[2,4], s32[2,4]) topk(x), k=4, largest=true\n"
      " v = f32[2,4] get-tuple-element(k), index=0\n tok = token[] after-all()\n"
      " o = token[] outfeed(v, tok), outfeed_shape=f32[2,4]\n z = s32[] constant(0)\n zf = f64[] constant(0)\n"
      " zb = f64[5] broadcast(zf), dimensions={}\n w = (s32[], f64[5]) while((s32[], f64[5]) tuple(z, zb)), "
      "condition=cond, body=body\n ROOT r = f64[5] get-tuple-element(w), index=1\n}\n";
  cx_gpu_prog p;
  CHECK_OK(build(text, "sm_75", 0, &p));
  int launches = 0, outfeeds = 0;
  for (int i = 0; i < p.nsteps; i++) {
    launches += p.steps[i].kind == CX_GPU_LAUNCH;
    outfeeds += p.steps[i].kind == CX_GPU_OUTFEED;
  }
  CHECK_EQ_INT(outfeeds, 1);
  CHECK(launches >= 4); /* top-k's tiles and merge, the rng and its counter (and the loop's add) */
  CHECK(p.rng_bytes == 8 && p.scratch_size >= p.rng_off + 8);
  if (p.ptx) {
    CHECK_STR_CONTAINS(p.ptx, "sqrt.rn.f64");
    CHECK_STR_CONTAINS(p.ptx, "div.rn.f64");
    CHECK_STR_CONTAINS(p.ptx, "fma.rn.f64");
    CHECK(!strstr(p.ptx, "approx.f64") && !strstr(p.ptx, "approx.ftz.f64"));
  }
  const char *exe = find_ptxas();
  char tmp[] = "/tmp/cxla_ptx.XXXXXX";
  if (exe && p.ptx && mkdtemp(tmp)) {
    char file[600], log[600];
    snprintf(file, sizeof file, "%s/h.ptx", tmp);
    snprintf(log, sizeof log, "%s/ptxas.log", tmp);
    static const char *const sms[] = {"sm_75", "sm_80", "sm_90"};
    for (int a = 0; a < 3; a++) {
      cx_gpu_prog q;
      if (build(text, sms[a], 0, &q) != CXLA_OK || !q.ptx) {
        test_fail(__FILE__, __LINE__, "%s: %s", sms[a], cxla_context_errmsg(test_ctx()));
        cx_gpu_prog_free(&q);
        continue;
      }
      FILE *f = fopen(file, "w");
      if (f) {
        fputs(q.ptx, f);
        fclose(f);
      }
      char *why = NULL;
      int rc = ptxas(exe, sms[a], file, log, 0);
      if (rc) why = slurp(log);
      CHECK_MSG(rc == 0, "ptxas %s: %s", sms[a], why ? why : "");
      cx_free(why);
      cx_gpu_prog_free(&q);
    }
    unlink(file);
    unlink(log);
    rmdir(tmp);
  } else if (!exe) {
    printf("    skipped ptxas: none found\n");
  }
  cx_gpu_prog_free(&p);
}
