/* test_codegen_shape.c — re-indexing ops through the emitter (each as a single-op fusion and
 * fused with producers/consumers by the fusion passes), compared exactly with the
 * interpreter. Index operands are random small integers, negative and out-of-range ones
 * included, so the clamping rules are exercised. */
#include "codegen_harness.h"

static void expect_ok(const char *text, int pass, int nfusions, const char *file, int line) {
  /* exact, except 2 ulps where f32 transcendentals (math.c) take part */
  cgt_opts o = {.fusion_pass = pass, .ulps = strstr(text, "exponential") || strstr(text, "tanh") ? 2 : 0};
  for (int s = 1; s <= 2; s++) {
    o.seed = (uint64_t)s;
    if (cgt_check(text, &o, file, line)) test_fail(file, line, "seed %d failed", s);
    if (nfusions >= 0 && o.nfusions != nfusions)
      test_fail(file, line, "%d fusions run, expected %d", o.nfusions, nfusions);
  }
}
#define OK1(text, n) expect_ok((text), 1, (n), __FILE__, __LINE__)
#define OKF(text, n) expect_ok((text), 2, (n), __FILE__, __LINE__)
#define OK0(text, n) expect_ok((text), 0, (n), __FILE__, __LINE__)

TEST(codegen_shape_broadcast_reshape_transpose) {
  OK1("HloModule s\nENTRY e {\n a = f32[7,1,5] parameter(0)\n v = s32[9] parameter(1)\n x = f32[] parameter(2)\n"
      " r0 = f32[3,7,4,5] broadcast(a), dimensions={1,2,3}\n"
      " r1 = s32[9,6] broadcast(v), dimensions={0}\n r2 = s32[6,9] broadcast(v), dimensions={1}\n"
      " r3 = f32[4,4] broadcast(x), dimensions={}\n"
      " r4 = f32[5,7] reshape(a)\n r5 = f32[35] bitcast(a)\n r6 = s32[3,3] reshape(v)\n"
      " r7 = f32[5,1,7] transpose(a), dimensions={2,1,0}\n r8 = f32[1,5,7] transpose(a), dimensions={1,2,0}\n"
      " ROOT t = (f32[3,7,4,5], s32[9,6], s32[6,9], f32[4,4], f32[5,7], f32[35], s32[3,3], f32[5,1,7], f32[1,5,7])"
      " tuple(r0, r1, r2, r3, r4, r5, r6, r7, r8)\n}\n", 8); /* a bitcast aliases its operand */
}

TEST(codegen_shape_slice_reverse_iota) {
  OK1("HloModule s\nENTRY e {\n a = f32[10,12] parameter(0)\n b = u8[17] parameter(1)\n"
      " r0 = f32[4,5] slice(a), slice={[1:9:2], [2:12:2]}\n r1 = f32[10,3] slice(a), slice={[0:10], [9:12]}\n"
      " r2 = u8[6] slice(b), slice={[0:17:3]}\n"
      " r3 = f32[10,12] reverse(a), dimensions={0,1}\n r4 = u8[17] reverse(b), dimensions={0}\n"
      " r5 = f32[10,12] reverse(a), dimensions={1}\n"
      " r6 = s32[4,6] iota(), iota_dimension=1\n r7 = f32[5,3,2] iota(), iota_dimension=0\n"
      " r8 = bf16[300] iota(), iota_dimension=0\n r9 = u8[2,300] iota(), iota_dimension=1\n"
      " r10 = pred[3,2] iota(), iota_dimension=0\n"
      " ROOT t = (f32[4,5], f32[10,3], u8[6], f32[10,12], u8[17], f32[10,12], s32[4,6], f32[5,3,2], bf16[300],"
      " u8[2,300], pred[3,2]) tuple(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10)\n}\n", 11);
}

TEST(codegen_shape_pad_concatenate) {
  OK1("HloModule s\nENTRY e {\n v = s32[6] parameter(0)\n z = s32[] parameter(1)\n a = f32[3,4] parameter(2)\n"
      " fz = f32[] parameter(3)\n b = f32[3,2] parameter(4)\n c = f32[3,0] parameter(5)\n d = f32[1,4] parameter(6)\n"
      " r0 = s32[9] pad(v, z), padding=1_2\n r1 = s32[18] pad(v, z), padding=1_1_2\n"
      " r2 = s32[5] pad(v, z), padding=-1_0\n r3 = s32[8] pad(v, z), padding=-2_-1_1\n"
      " r4 = f32[8,5] pad(a, fz), padding=2_3_0x-1_-1_1\n r5 = f32[3,0] pad(a, fz), padding=0_0x-4_0\n"
      " r6 = f32[3,10] concatenate(a, b, c, a), dimensions={1}\n r7 = f32[7,4] concatenate(a, d, a), dimensions={0}\n"
      " ROOT t = (s32[9], s32[18], s32[5], s32[8], f32[8,5], f32[3,0], f32[3,10], f32[7,4])"
      " tuple(r0, r1, r2, r3, r4, r5, r6, r7)\n}\n", 8);
}

TEST(codegen_shape_dynamic_slice_update) {
  OK1("HloModule s\nENTRY e {\n a = f32[8,9] parameter(0)\n i = s32[] parameter(1)\n j = s32[] parameter(2)\n"
      " u = f32[3,4] parameter(3)\n k = u64[] parameter(4)\n w = u64[] parameter(5)\n vi = s32[2] parameter(6)\n"
      " r0 = f32[3,4] dynamic-slice(a, i, j), dynamic_slice_sizes={3,4}\n"
      " r1 = f32[8,9] dynamic-update-slice(a, u, i, j)\n"
      " r2 = f32[2,9] dynamic-slice(a, k, w), dynamic_slice_sizes={2,9}\n"
      " r3 = f32[8,9] dynamic-update-slice(a, u, k, w)\n"
      " r4 = f32[8,9] dynamic-slice(a, i, j), dynamic_slice_sizes={8,9}\n"
      " ROOT t = (f32[3,4], f32[8,9], f32[2,9], f32[8,9], f32[8,9]) tuple(r0, r1, r2, r3, r4)\n}\n", 5);
}

TEST(codegen_shape_gather) {
  OK1("HloModule s\nENTRY e {\n table = f32[10,6] parameter(0)\n rows = s32[7] parameter(1)\n"
      " pts = s32[5,2] parameter(2)\n m = u16[12,13] parameter(3)\n x = f32[4,9] parameter(4)\n"
      " bi = s64[4,3] parameter(5)\n cube = f32[5,6,7] parameter(6)\n ci = u8[3,2,2] parameter(7)\n pts2 = s32[2,3] parameter(8)\n"
      " g0 = f32[7,6] gather(table, rows), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}\n"
      " g1 = u16[5] gather(m, pts), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}\n"
      " g2 = u16[5,3,4] gather(m, pts), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={3,4}\n"
      " g3 = f32[4,3] gather(x, bi), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}\n"
      " g4 = f32[3,2,4,7] gather(cube, ci), offset_dims={2,3}, collapsed_slice_dims={1}, start_index_map={1,0}, index_vector_dim=2, slice_sizes={4,1,7}\n"
      " g5 = f32[3,2,6] gather(table, pts2), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={2,6}\n"
      " ROOT t = (f32[7,6], u16[5], u16[5,3,4], f32[4,3], f32[3,2,4,7], f32[3,2,6]) tuple(g0, g1, g2, g3, g4, g5)\n}\n", 6);
}

/* The same ops fused with producers and consumers by the fusion pass: one kernel each. */
TEST(codegen_shape_fused_chains) {
  OKF("HloModule s\nENTRY e {\n a = f32[16,24] parameter(0)\n b = f32[24] parameter(1)\n"
      " t = f32[24,16] transpose(a), dimensions={1,0}\n bb = f32[24,16] broadcast(b), dimensions={0}\n"
      " s = f32[24,16] add(t, bb)\n r = f32[24,16] reverse(s), dimensions={1}\n"
      " ROOT m = f32[24,16] multiply(r, t)\n}\n", 1);
  /* expensive operands of concatenate and pad: a branch picks the one operand computed */
  OKF("HloModule s\nENTRY e {\n a = f32[5,8] parameter(0)\n b = f32[5,3] parameter(1)\n z = f32[] parameter(2)\n"
      " ea = f32[5,8] exponential(a)\n lb = f32[5,3] log(b)\n c = f32[5,11] concatenate(ea, lb), dimensions={1}\n"
      " p = f32[9,13] pad(c, z), padding=2_2x1_1\n ROOT r = f32[9,13] tanh(p)\n}\n", 1);
  OKF("HloModule s\nENTRY e {\n a = f32[6,7] parameter(0)\n u = f32[2,3] parameter(1)\n i = s32[] parameter(2)\n"
      " j = s32[] parameter(3)\n eu = f32[2,3] exponential(u)\n"
      " d = f32[6,7] dynamic-update-slice(a, eu, i, j)\n ROOT r = f32[6,7] sqrt(d)\n}\n", -1);
}

/* A loop fusion written as XLA prints it after optimisation (multi-output, same-shape roots). */
TEST(codegen_shape_multi_output_loop) {
  OK0("HloModule m\n"
      "fused {\n p0 = f32[33,20] parameter(0)\n p1 = f32[20] parameter(1)\n"
      " b = f32[33,20] broadcast(p1), dimensions={1}\n s = f32[33,20] subtract(p0, b)\n"
      " e = f32[33,20] exponential(s)\n c = pred[33,20] compare(s, b), direction=GT\n"
      " ROOT t = (f32[33,20], pred[33,20], f32[33,20]) tuple(e, c, s)\n}\n"
      "ENTRY e {\n x = f32[33,20] parameter(0)\n y = f32[20] parameter(1)\n"
      " ROOT f = (f32[33,20], pred[33,20], f32[33,20]) fusion(x, y), kind=kLoop, calls=fused\n}\n", 1);
}

/* Array constants become module globals; iota and constants fuse. */
TEST(codegen_shape_constants) {
  OKF("HloModule k\nENTRY e {\n a = s32[2,3] parameter(0)\n c = s32[2,3] constant({{1,2,3},{-4,5,-6}})\n"
      " i = s32[2,3] iota(), iota_dimension=1\n s = s32[2,3] add(a, c)\n ROOT m = s32[2,3] multiply(s, i)\n}\n", -1);
}

/* bitcast inside a fusion, also between element types of one size (bits reinterpreted) */
TEST(codegen_shape_fused_bitcast) {
  OK0("HloModule b\nfb {\n p = f32[6,4] parameter(0)\n b = s32[24] bitcast(p)\n c = s32[] constant(1)\n"
      " cb = s32[24] broadcast(c), dimensions={}\n x = s32[24] xor(b, cb)\n ROOT r = f32[4,6] bitcast(x)\n}\n"
      "ENTRY e {\n a = f32[6,4] parameter(0)\n ROOT f = f32[4,6] fusion(a), kind=kLoop, calls=fb\n}\n", 1);
}

/* A DAG whose every node reads the previous one twice: without the per-(instruction, index)
 * value cache the kernel would have 2^48 adds. */
TEST(codegen_shape_dag_does_not_blow_up) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule d\nfd {\n x0 = s32[100] parameter(0)\n");
  for (int i = 1; i <= 48; i++) cx_sb_printf(&sb, " x%d = s32[100] add(x%d, x%d)\n", i, i - 1, i - 1);
  cx_sb_puts(&sb, " ROOT r = s32[100] negate(x48)\n}\nENTRY e {\n a = s32[100] parameter(0)\n"
                  " ROOT f = s32[100] fusion(a), kind=kLoop, calls=fd\n}\n");
  char *text = cx_sb_take(&sb);
  OK0(text, 1);
  cx_free(text);
}
