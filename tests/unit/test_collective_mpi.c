/* test_collective_mpi.c — the C API's communicator: an application that uses MPI itself runs
 * cxla on a communicator of its own. Under mpirun (tests/devices/mpi_test.sh runs it with
 * -np 4) the ranks split into pairs, each pair an all-reduce run of two devices; alone, the
 * calls say there is no MPI run. */
#ifdef CX_HAVE_MPI
#include <mpi.h>
#endif
#include "test.h"

#define SUM "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"

/* All-reduce of x over the context's run; -1 on failure. */
static float all_reduce(float x) {
  const char *text = "HloModule m\n" SUM "ENTRY e {\n  x = f32[] parameter(0)\n"
                     "  ROOT r = f32[] all-reduce(x), replica_groups={}, to_apply=sum\n}\n";
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  cxla_buffer *arg = NULL, *res = NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  float got = -1;
  cxla_status s = cxla_module_parse(test_ctx(), text, strlen(text), "m.hlo", &m);
  if (s == CXLA_OK) s = cxla_compile(m, &o, &e);
  if (s == CXLA_OK) s = cxla_buffer_from_data(test_ctx(), "cpu", CXLA_F32, 0, NULL, &x, sizeof x, &arg);
  if (s == CXLA_OK) s = cxla_executable_execute(e, 1, &arg, &res);
  if (s == CXLA_OK) memcpy(&got, cxla_buffer_data(res), sizeof got);
  else test_fail(__FILE__, __LINE__, "%s", cxla_context_errmsg(test_ctx()));
  cxla_buffer_destroy(res);
  cxla_buffer_destroy(arg);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  return got;
}

TEST(collective_communicator) {
  int rank = -1, size = -1;
  CHECK_OK(cxla_context_device(test_ctx(), &rank, &size));
#ifndef CX_HAVE_MPI
  CHECK(rank == 0 && size == 1);
  int comm = 0;
  CHECK(cxla_context_set_communicator(test_ctx(), &comm) == CXLA_ERR_UNSUPPORTED);
#else
  int inited = 0;
  MPI_Initialized(&inited);
  if (size == 1) { /* alone: no MPI, and a communicator needs it initialised */
    CHECK(!inited);
    MPI_Comm comm = MPI_COMM_NULL;
    CHECK(cxla_context_set_communicator(test_ctx(), &comm) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "MPI is not initialised");
    CHECK_OK(cxla_context_set_communicator(test_ctx(), NULL));
    CHECK_EQ_INT(all_reduce(2.5f), 2.5); /* a run of one device */
    return;
  }
  /* the world first (cxla initialises MPI for it): x = rank + 1 sums to n(n+1)/2 */
  CHECK_EQ_INT(all_reduce((float)(rank + 1)), size * (size + 1) / 2);
  CHECK(size % 2 == 0);
  MPI_Comm pair;
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair) == MPI_SUCCESS);
  CHECK_OK(cxla_context_set_communicator(test_ctx(), &pair));
  int d = -1, n = -1;
  CHECK_OK(cxla_context_device(test_ctx(), &d, &n));
  CHECK(d == rank % 2 && n == 2);
  /* ranks 2k and 2k+1 add 2k+1 and 2k+2 */
  CHECK_EQ_INT(all_reduce((float)(rank + 1)), 4 * (rank / 2) + 3);
  CHECK_OK(cxla_context_set_communicator(test_ctx(), NULL)); /* back to MPI_COMM_WORLD */
  CHECK_EQ_INT(all_reduce(1.0f), size);
  CHECK_OK(cxla_context_device(test_ctx(), &d, &n));
  CHECK(d == rank && n == size);
  MPI_Comm_free(&pair);
#endif
}
