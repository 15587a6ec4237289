/* test_collective_verify.c — the collectives' text and shape rules: replica groups in both of
 * XLA's forms read, expanded and printed back as written; source-target pairs; the verifier's
 * errors (with their location) for groups that do not cover the devices, shapes that do not
 * fit, dimensions out of range; and which devices a group holds under each of XLA's group
 * modes. Expected groups are expanded by hand from XLA's definitions. */
#include "ir/groups.h"
#include "ir/verify.h"
#include "text/hlo.h"
#include "test.h"

#define SUM "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"

static cx_module *parse_ok(const char *text) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  CHECK_MSG(s == CXLA_OK, "parse failed: %s", cxla_context_errmsg(test_ctx()));
  if (s == CXLA_OK) CHECK_OK(cx_verify_module(m));
  return m;
}

static cx_instr *find(cx_module *m, const char *name) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++)
      if (m->comps[c]->instrs[i]->name && !strcmp(m->comps[c]->instrs[i]->name, name)) return m->comps[c]->instrs[i];
  return NULL;
}

/* The groups as "{{0,1},{2,3}}", expanded (whatever form they were written in). */
static const char *expanded(const cx_groups *g, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "{");
  for (int i = 0; g && i < g->n && k < n; i++) {
    k += (size_t)snprintf(buf + k, n - k, "%s{", i ? "," : "");
    for (int64_t j = g->start[i]; j < g->start[i + 1] && k < n; j++)
      k += (size_t)snprintf(buf + k, n - k, "%s%lld", j > g->start[i] ? "," : "", (long long)g->ids[j]);
    if (k < n) k += (size_t)snprintf(buf + k, n - k, "}");
  }
  if (k < n) snprintf(buf + k, n - k, "}");
  return buf;
}

static char *print(cx_module *m) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  return cx_sb_take(&sb);
}

TEST(collective_groups_read_and_printed) {
  cx_module *m = parse_ok("HloModule m, replica_count=4\n" SUM
                          "ENTRY e {\n  x = f32[4] parameter(0)\n"
                          "  g1 = f32[4] all-reduce(x), replica_groups=[2,2]<=[4], to_apply=sum\n"
                          "  g2 = f32[4] all-reduce(g1), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=sum\n"
                          "  c = f32[4] all-reduce(g2), replica_groups=[4,1]<=[2,1,2]T(2,0,1), to_apply=sum\n"
                          "  d = f32[4] all-reduce(c), replica_groups={{3,1},{0,2}}, to_apply=sum\n"
                          "  e = f32[4] all-reduce(d), replica_groups={}, channel_id=7, to_apply=sum\n"
                          "  ROOT p = f32[4] collective-permute(e), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n}\n");
  if (!m) return;
  char buf[128];
  /* [2,2]<=[4]: ids 0..3 read as 2 groups of 2; T(1,0) reads the 2x2 array by columns;
   * [2,1,2]T(2,0,1): element (i,j,k) of the transposed 2x2x1 array is (j,k,i) of the original,
   * id 2j + 2k + i: 0, 2, 1, 3 */
  CHECK_STR_CONTAINS(expanded(find(m, "g1")->a.replica_groups, buf, sizeof buf), "{{0,1},{2,3}}");
  CHECK_STR_CONTAINS(expanded(find(m, "g2")->a.replica_groups, buf, sizeof buf), "{{0,2},{1,3}}");
  CHECK_STR_CONTAINS(expanded(find(m, "c")->a.replica_groups, buf, sizeof buf), "{{0},{2},{1},{3}}");
  CHECK_STR_CONTAINS(expanded(find(m, "d")->a.replica_groups, buf, sizeof buf), "{{3,1},{0,2}}");
  CHECK(find(m, "e")->a.replica_groups == NULL && find(m, "e")->a.channel_id == 7);
  CHECK_STR_CONTAINS(expanded(find(m, "p")->a.source_target_pairs, buf, sizeof buf), "{{0,1},{1,2},{2,3},{3,0}}");
  char *t = print(m);
  CHECK_STR_CONTAINS(t, "replica_groups=[2,2]<=[4], to_apply=sum");
  CHECK_STR_CONTAINS(t, "replica_groups=[2,2]<=[2,2]T(1,0)");
  CHECK_STR_CONTAINS(t, "replica_groups=[4,1]<=[2,1,2]T(2,0,1)");
  CHECK_STR_CONTAINS(t, "replica_groups={{3,1},{0,2}}");
  CHECK_STR_CONTAINS(t, "all-reduce(d), channel_id=7, replica_groups={}, to_apply=sum");
  CHECK_STR_CONTAINS(t, "source_target_pairs={{0,1},{1,2},{2,3},{3,0}}");
  cx_free(t);
  cx_module_free(m);
}

static void expect_err(const char *text, cxla_status code, const char *msg, int line) {
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m);
  if (s == CXLA_OK) s = cx_verify_module(m);
  const char *got = cxla_context_errmsg(test_ctx());
  if (s != code) test_fail(__FILE__, line, "status %s, expected %s (%s)", cxla_status_str(s), cxla_status_str(code), got);
  else if (!strstr(got, msg)) test_fail(__FILE__, line, "'%s' does not contain '%s'", got, msg);
  cx_module_free(m);
}
#define VERR(text, msg) expect_err((text), CXLA_ERR_VERIFY, (msg), __LINE__)
#define PERR(text, msg) expect_err((text), CXLA_ERR_PARSE, (msg), __LINE__)
/* ENTRY e on line 7 (after the sum reducer), x = f32[4] parameter(0) on line 8, then `body` from line 9 */
#define E(body) "HloModule m\n" SUM "ENTRY e {\n  x = f32[4] parameter(0)\n" body "}\n"
#define E4(body) "HloModule m, replica_count=4\n" SUM "ENTRY e {\n  x = f32[4] parameter(0)\n" body "}\n"

TEST(collective_verify_groups) {
  VERR(E("  ROOT r = f32[4] all-reduce(x), replica_groups={{0,2}}, to_apply=sum\n"),
       "t.hlo:9:8: error: all-reduce r: replica groups name 2 ids, so they must be 0..1, but one is 2");
  VERR(E("  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1},{1,2}}, to_apply=sum\n"),
       "t.hlo:9:8: error: all-reduce r: replica groups name id 1 twice");
  VERR(E("  ROOT r = f32[4] all-reduce(x), replica_groups={{0},{}}, to_apply=sum\n"),
       "t.hlo:9:8: error: all-reduce r: replica group 1 is empty");
  /* the header says 4 replicas: groups must cover all of them */
  VERR(E4("  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=sum\n"),
       "t.hlo:9:8: error: all-reduce r: replica groups name 2 replicas, but the module header says there are 4");
  VERR(E("  ROOT r = f32[8] all-gather(x), replica_groups={{0},{1,2}}, dimensions={0}\n"),
       "t.hlo:9:8: error: all-gather r: replica groups must all have one size: group 0 has 1 ids, group 1 has 2");
  VERR(E("  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum\n"),
       "t.hlo:9:8: error: all-reduce r: use_global_device_ids=true needs a channel_id");
  VERR(E("  ROOT r = f32[4] all-reduce(x), channel_id=1, use_global_device_ids=true, to_apply=sum\n"),
       "use_global_device_ids=true needs replica_groups that name the devices");
  PERR(E("  ROOT r = f32[4] all-reduce(x), replica_groups={{0,-1}}, to_apply=sum\n"),
       "t.hlo:9:53: error: ids must be >= 0, got -1");
  /* pairs */
  VERR(E("  ROOT r = f32[4] collective-permute(x), source_target_pairs={{0,1},{0,2}}\n"),
       "t.hlo:9:8: error: collective-permute r: source_target_pairs: 0 is a source twice");
  VERR(E("  ROOT r = f32[4] collective-permute(x), source_target_pairs={{0,1},{2,1}}\n"),
       "t.hlo:9:8: error: collective-permute r: source_target_pairs: 1 is a target twice");
  VERR(E4("  ROOT r = f32[4] collective-permute(x), source_target_pairs={{0,4}}\n"),
       "source_target_pairs pair {0,4}: the module header says there are 4 replicas");
  PERR(E("  ROOT r = f32[4] collective-permute(x), source_target_pairs={{0,1,2}}\n"),
       "t.hlo:9:63: error: a source-target pair has 2 ids (source, target), not 3");
  PERR(E("  ROOT r = f32[4] collective-permute(x), source_target_pairs=[2,2]<=[4]\n"),
       "expected source-target pairs such as {{0,1},{1,0}}");
  PERR(E("  ROOT r = f32[4] collective-permute(x)\n"), "collective-permute needs attribute source_target_pairs=");
}

TEST(collective_verify_shapes) {
  /* all-gather grows dimension 0 by the group size (2 here), reduce-scatter shrinks it */
  VERR(E("  ROOT r = f32[6] all-gather(x), replica_groups={{0,1}}, dimensions={0}\n"),
       "t.hlo:9:8: error: all-gather r: dimension 0 must be 4 x 2 = 8 for groups of 2, got 6");
  VERR(E("  ROOT r = f32[4] all-gather(x), replica_groups={{0,1}}, dimensions={1}\n"),
       "t.hlo:9:8: error: all-gather r: dimensions {1}: dimension 1 is out of range for rank 1");
  VERR(E("  ROOT r = f32[8] all-gather(x), replica_groups={{0,1}}, dimensions={0,0}\n"),
       "all-gather r: dimensions={0,0} must name exactly one dimension");
  VERR(E("  ROOT r = s32[8] all-gather(x), replica_groups={{0,1}}, dimensions={0}\n"),
       "all-gather r: declared result s32[8] does not fit operand 0 f32[4] (the all-gather keeps type and rank)");
  VERR(E("  ROOT r = f32[3] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=sum\n"),
       "t.hlo:9:8: error: reduce-scatter r: dimension 0 must be 2 x 2 = 4 for groups of 2, got 3");
  /* without written groups or a header the factor comes from the declared shape */
  VERR(E("  ROOT r = f32[6] all-gather(x), dimensions={0}\n"),
       "all-gather r: dimension 0: 6 is not a whole multiple of 4");
  VERR(E("  ROOT r = f32[4] all-to-all(x), replica_groups={{0,1,2}}, dimensions={0}\n"),
       "all-to-all r: dimension 0 of f32[4] (4) does not split into 3 blocks");
  VERR(E("  y = s32[4] parameter(1)\n  ROOT r = (f32[4], s32[4]) all-reduce(x, y), to_apply=sum\n"),
       "t.hlo:10:8: error: all-reduce r: operands must have one element type (to_apply reduces them all), got f32 and s32");
  /* XLA's verifier does not look at an all-reduce's reducer: one of another element type
   * verifies (the backends refuse to run it: tests/hlo/errors/all_reduce_reducer_type.hlo);
   * one that is not a reducer of scalars does not */
  cx_module_free(parse_ok(E("  y = s32[4] parameter(1)\n  ROOT r = s32[4] all-reduce(y), to_apply=sum\n")));
  VERR("HloModule m\nbad {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT s = f32[2] add(a, b)\n}\n"
       "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(x), to_apply=bad\n}\n",
       "all-reduce r: to_apply bad: parameter 0 must be f32[] (an accumulator), got f32[2]");
  VERR(E("  ROOT r = f32[4] all-reduce(x), to_apply=sum\n  s = f32[4] all-reduce-done(x)\n"),
       "all-reduce-done s: operand must be an all-reduce-start, got parameter");
  VERR(E("  s = (f32[4], f32[4]) all-gather-start(x), replica_groups={{0,1}}, dimensions={0}\n"
         "  ROOT d = f32[4] all-gather-done(s)\n"),
       "all-gather-start s: dimension 0 must be 4 x 2 = 8 for groups of 2, got 4");
  VERR(E("  s = (f32[4], f32[2]) collective-permute-start(x), source_target_pairs={{0,1}}\n"
         "  ROOT d = f32[2] collective-permute-done(s)\n"),
       "collective-permute-start s: declared shape (f32[4], f32[2]) must be (f32[4], f32[4], context...)");
  /* what is right: shapes XLA gives */
  cx_module *m = parse_ok(E("  y = f32[2,3] parameter(1)\n"
                            "  g = (f32[8], f32[4,3]) all-gather(x, y), replica_groups={{0,1}}, dimensions={0}\n"
                            "  s = ((f32[4], f32[2,3]), (f32[8], f32[4,3])) all-gather-start(x, y), replica_groups={{0,1}}, dimensions={0}\n"
                            "  d = (f32[8], f32[4,3]) all-gather-done(s)\n"
                            "  rs = f32[2] reduce-scatter(x), replica_groups={{1,0}}, dimensions={0}, to_apply=sum\n"
                            "  a2 = (f32[4], f32[4]) all-to-all(x, x), replica_groups={{0,1}}\n"
                            "  a1 = f32[4] all-to-all(x), replica_groups={{0,1}}, dimensions={0}\n"
                            "  cp = (f32[4], f32[4], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1}}\n"
                            "  cd = f32[4] collective-permute-done(cp)\n"
                            "  ar = (f32[4], f32[4]) all-reduce-start(x, x), to_apply=sum\n"
                            "  ad = (f32[4], f32[4]) all-reduce-done(ar)\n"
                            "  cb = f32[4] collective-broadcast(x), replica_groups={{0,1}}\n"
                            "  ROOT t = tuple(g, d, rs, a2, a1, cd, ad, cb)\n"));
  cx_module_free(m);
}

/* The devices of the group device `me` is in, as "pos:[d0,d1,...]" or the error. */
static const char *group_of(const char *text, const char *name, int replicas, int partitions, int me, char *buf,
                            size_t n) {
  cx_module *m = parse_ok(text);
  if (!m) return "";
  int out[64], pos = -1;
  char why[200];
  cx_devices dv = {replicas, partitions};
  int k = cx_collective_group(find(m, name), dv, me, out, 64, &pos, why, sizeof why);
  if (k < 0) {
    snprintf(buf, n, "error: %s", why);
  } else {
    size_t len = (size_t)snprintf(buf, n, "%d:[", pos);
    for (int i = 0; i < k && len < n; i++) len += (size_t)snprintf(buf + len, n - len, "%s%d", i ? "," : "", out[i]);
    if (len < n) snprintf(buf + len, n - len, "]");
  }
  cx_module_free(m);
  return buf;
}

TEST(collective_group_modes) {
  char b[256];
  /* no channel: replica ids, within the device's partition. 3 replicas x 2 partitions, device 3
   * is replica 1 partition 1; {} is every replica: devices 1, 3, 5 */
  CHECK_STR_CONTAINS(group_of(E("  ROOT r = f32[4] all-reduce(x), to_apply=sum\n"), "r", 3, 2, 3, b, sizeof b), "1:[1,3,5]");
  /* groups in their written order: {2,0} puts replica 2 (device 4) first */
  CHECK_STR_CONTAINS(group_of(E("  ROOT r = f32[4] all-reduce(x), replica_groups={{2,0},{1}}, to_apply=sum\n"), "r", 3, 2, 0, b,
                              sizeof b), "1:[4,0]");
  /* a channel without use_global_device_ids: replica ids, each with every partition */
  CHECK_STR_CONTAINS(group_of(E("  ROOT r = f32[4] all-reduce(x), channel_id=1, replica_groups={{1,0}}, to_apply=sum\n"), "r", 2,
                              2, 1, b, sizeof b), "3:[2,3,0,1]");
  /* use_global_device_ids: device ids */
  CHECK_STR_CONTAINS(group_of(E("  ROOT r = f32[4] all-reduce(x), channel_id=1, replica_groups={{0,2},{1,3}}, "
                                "use_global_device_ids=true, to_apply=sum\n"), "r", 1, 4, 3, b, sizeof b), "1:[1,3]");
  /* all-to-all with a channel: partition ids within the device's replica (device 2: r1 p0) */
  CHECK_STR_CONTAINS(group_of(E("  ROOT r = f32[4] all-to-all(x), channel_id=1, replica_groups={{1,0}}, dimensions={0}\n"), "r",
                              2, 2, 2, b, sizeof b), "1:[3,2]");
  /* groups that name more ids than the run has devices */
  CHECK_STR_CONTAINS(group_of(E("  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=sum\n"), "r", 1, 1, 0, b,
                              sizeof b), "error: its replica groups (cross-replica) name 2 replicas, but this run has 1");
  cx_module *m = parse_ok(E("  ROOT r = f32[4] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,0}}\n"));
  if (!m) return;
  int to, from;
  char why[256];
  cx_devices dv = {3, 1};
  CHECK(cx_collective_permute_peers(m->entry->root, dv, 1, &to, &from, why, sizeof why) == 0 && to == 2 && from == 0);
  dv.replicas = 2;
  CHECK(cx_collective_permute_peers(m->entry->root, dv, 1, &to, &from, why, sizeof why) < 0);
  CHECK_STR_CONTAINS(why, "source_target_pairs name replicas 2, but this run has 2");
  cx_module_free(m);
  /* the header decides how the devices of a run split into replicas and partitions */
  m = parse_ok("HloModule m, num_partitions=2\nENTRY e {\n  ROOT r = u32[] replica-id()\n}\n");
  if (!m) return;
  CHECK(cx_module_devices(m, 4, &dv, why, sizeof why) == 0 && dv.replicas == 2 && dv.partitions == 2);
  CHECK(cx_module_devices(m, 3, &dv, why, sizeof why) < 0);
  CHECK_STR_CONTAINS(why, "is for 2 devices (replica_count=1 x num_partitions=2); this run has 3");
  cx_module_free(m);
}
