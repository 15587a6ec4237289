/* train_models.c — the three models of the demo, built op by op with cxla's builder API:
 * softmax regression 784->10 (the XLA tutorial's), the MLP 784-128-64-10 with ReLU (XLA.jl's),
 * and a LeNet-style CNN (two 3x3 conv + ReLU + 2x2 max-pool layers, two dense layers), each
 * ending in softmax cross-entropy over integer labels. The builder checks every op's shape as
 * it is added, so a mistake here is reported at the call that made it. */
#include <math.h>
#include <string.h>
#include "train.h"

#define CNN_C1 16 /* channels of the first and second convolution */
#define CNN_C2 32
#define CNN_K 3   /* their kernels: CNN_K x CNN_K */
#define STR_(x) #x
#define STR(x) STR_(x)
#define CNN_FLAT (7 * 7 * CNN_C2)
#define HIDDEN 128

static const model_spec k_models[MODEL_COUNT] = {
    [MODEL_SOFTMAX] = {MODEL_SOFTMAX, "softmax", "softmax regression 784->10", 2,
                       {"w", "b"}, {2, 1}, {{IMG_PIXELS, NUM_CLASSES}, {NUM_CLASSES}},
                       {IMG_PIXELS, 0}, {NUM_CLASSES, 0}, {0, 0}},
    [MODEL_MLP] = {MODEL_MLP, "mlp", "MLP 784-128-64-10, ReLU", 6,
                   {"w1", "b1", "w2", "b2", "w3", "b3"}, {2, 1, 2, 1, 2, 1},
                   {{IMG_PIXELS, 128}, {128}, {128, 64}, {64}, {64, NUM_CLASSES}, {NUM_CLASSES}},
                   {IMG_PIXELS, 0, 128, 0, 64, 0}, {128, 0, 64, 0, NUM_CLASSES, 0}, {1, 0, 1, 0, 0, 0}},
    [MODEL_CNN] = {MODEL_CNN, "cnn", "LeNet-style CNN: conv" STR(CNN_K) "x" STR(CNN_K) "(" STR(CNN_C1) ")-pool-conv" STR(CNN_K) "x" STR(CNN_K) "(" STR(CNN_C2) ")-pool-dense(" STR(HIDDEN) ")-dense(10), ReLU", 8,
                   {"conv1", "conv1_b", "conv2", "conv2_b", "dense1", "dense1_b", "dense2", "dense2_b"},
                   {4, 1, 4, 1, 2, 1, 2, 1},
                   {{CNN_K, CNN_K, 1, CNN_C1}, {CNN_C1}, {CNN_K, CNN_K, CNN_C1, CNN_C2}, {CNN_C2}, {CNN_FLAT, HIDDEN}, {HIDDEN},
                    {HIDDEN, NUM_CLASSES}, {NUM_CLASSES}},
                   {CNN_K * CNN_K, 0, CNN_K * CNN_K * CNN_C1, 0, CNN_FLAT, 0, HIDDEN, 0},
                   {CNN_K * CNN_K * CNN_C1, 0, CNN_K * CNN_K * CNN_C2, 0, HIDDEN, 0, NUM_CLASSES, 0}, {1, 0, 1, 0, 1, 0, 0, 0}},
};

const model_spec *model_get(model_kind kind) { return &k_models[kind]; }

int64_t model_weight_count(const model_spec *s, int i) {
  int64_t n = 1;
  for (int d = 0; d < s->rank[i]; d++) n *= s->dims[i][d];
  return n;
}

/* ---- building blocks ---- */
typedef struct {
  cxla_builder *b;
  cxla_computation *add, *max; /* scalar f32 reducers */
} net;

static cxla_shape array_shape(cxla_type t, int rank, const int64_t *dims) {
  cxla_shape s = {t, rank, dims, 0, NULL};
  return s;
}

/* A scalar f32 computation (a, b) -> op(a, b), for reduce and reduce-window. */
static cxla_computation *reducer(cxla_module *m, const char *name, const char *op) {
  cxla_shape scalar = array_shape(CXLA_F32, 0, NULL);
  cxla_builder *b = cxla_builder_create(m, name);
  if (!b) return NULL;
  cxla_op x = cxla_builder_parameter(b, 0, &scalar, NULL), y = cxla_builder_parameter(b, 1, &scalar, NULL);
  cxla_computation *c = NULL;
  return cxla_builder_finish(b, cxla_builder_binary(b, op, x, y), 0, &c) == CXLA_OK ? c : NULL;
}

static cxla_op splat(net *n, double v, int rank, const int64_t *dims) {
  return cxla_builder_broadcast(n->b, cxla_builder_constant_scalar(n->b, CXLA_F32, v), rank, dims, NULL);
}

static cxla_op relu(net *n, cxla_op x, int rank, const int64_t *dims) {
  return cxla_builder_max(n->b, x, splat(n, 0, rank, dims));
}

/* x[batch, in] @ w[in, out] + b[out], then ReLU when asked */
static cxla_op dense(net *n, cxla_op x, cxla_op w, cxla_op bias, int64_t batch, int64_t out, int with_relu) {
  int64_t d[2] = {batch, out}, bias_dim = 1;
  cxla_op y = cxla_builder_add(n->b, cxla_builder_matmul(n->b, x, w), cxla_builder_broadcast(n->b, bias, 2, d, &bias_dim));
  return with_relu ? relu(n, y, 2, d) : y;
}

/* NHWC x[batch, side, side, cin] -> CNN_K x CNN_K SAME convolution + bias + ReLU -> 2x2 max-pool */
static cxla_op conv_block(net *n, cxla_op x, cxla_op k, cxla_op bias, int64_t batch, int64_t side, int64_t cout) {
  cxla_window_dim w[2] = {{CNN_K, 1, CNN_K / 2, CNN_K / 2, 1, 1, 0}, {CNN_K, 1, CNN_K / 2, CNN_K / 2, 1, 1, 0}};
  int64_t d[4] = {batch, side, side, cout}, bias_dim = 3;
  cxla_op c = cxla_builder_convolution(n->b, x, k, "b01f_01io->b01f", w, 1, 1);
  c = relu(n, cxla_builder_add(n->b, c, cxla_builder_broadcast(n->b, bias, 4, d, &bias_dim)), 4, d);
  cxla_window_dim pool[4] = {{1, 1, 0, 0, 1, 1, 0}, {2, 2, 0, 0, 1, 1, 0}, {2, 2, 0, 0, 1, 1, 0}, {1, 1, 0, 0, 1, 1, 0}};
  cxla_op ninf = cxla_builder_constant_scalar(n->b, CXLA_F32, -INFINITY);
  return cxla_builder_reduce_window(n->b, 1, &c, &ninf, pool, n->max);
}

/* Mean softmax cross-entropy of logits[batch, 10] against labels s32[batch]: log-softmax as
 * z - max(z) - log(sum(exp(z - max(z)))) so exp never overflows, and the label's entry picked
 * by comparing an iota of class numbers with the broadcast label (a one-hot mask). */
static cxla_op xent(net *n, cxla_op logits, cxla_op labels, int64_t batch) {
  cxla_builder *b = n->b;
  int64_t d[2] = {batch, NUM_CLASSES}, row = 0, cls = 1, both[2] = {0, 1};
  cxla_op zero = cxla_builder_constant_scalar(b, CXLA_F32, 0);
  cxla_op ninf = cxla_builder_constant_scalar(b, CXLA_F32, -INFINITY);
  cxla_op mx = cxla_builder_reduce(b, 1, &logits, &ninf, 1, &cls, n->max);
  cxla_op z = cxla_builder_sub(b, logits, cxla_builder_broadcast(b, mx, 2, d, &row));
  cxla_op sum = cxla_builder_reduce(b, 1, (cxla_op[]){cxla_builder_exp(b, z)}, &zero, 1, &cls, n->add);
  cxla_op logp = cxla_builder_sub(b, z, cxla_builder_broadcast(b, cxla_builder_log(b, sum), 2, d, &row));
  cxla_op hot = cxla_builder_compare(b, cxla_builder_iota(b, CXLA_S32, 2, d, 1),
                                     cxla_builder_broadcast(b, labels, 2, d, &row), CXLA_EQ, NULL);
  cxla_op picked = cxla_builder_select(b, hot, logp, splat(n, 0, 2, d));
  cxla_op total = cxla_builder_reduce(b, 1, &picked, &zero, 2, both, n->add);
  return cxla_builder_mul(b, total, cxla_builder_constant_scalar(b, CXLA_F32, -1.0 / (double)batch));
}

static cxla_op logits_of(net *n, const model_spec *s, const cxla_op *w, cxla_op images, int64_t batch) {
  switch (s->kind) {
  case MODEL_SOFTMAX:
    return dense(n, images, w[0], w[1], batch, NUM_CLASSES, 0);
  case MODEL_MLP: {
    cxla_op h1 = dense(n, images, w[0], w[1], batch, 128, 1);
    cxla_op h2 = dense(n, h1, w[2], w[3], batch, 64, 1);
    return dense(n, h2, w[4], w[5], batch, NUM_CLASSES, 0);
  }
  case MODEL_CNN: {
    int64_t nhwc[4] = {batch, IMG_SIDE, IMG_SIDE, 1}, flat[2] = {batch, CNN_FLAT};
    cxla_op x = cxla_builder_reshape(n->b, images, 4, nhwc);
    x = conv_block(n, x, w[0], w[1], batch, IMG_SIDE, CNN_C1);
    x = conv_block(n, x, w[2], w[3], batch, IMG_SIDE / 2, CNN_C2);
    cxla_op h = dense(n, cxla_builder_reshape(n->b, x, 2, flat), w[4], w[5], batch, HIDDEN, 1);
    return dense(n, h, w[6], w[7], batch, NUM_CLASSES, 0);
  }
  case MODEL_COUNT:
    break;
  }
  return (cxla_op){0};
}

cxla_module *model_build(cxla_context *ctx, const model_spec *s, int64_t batch, int with_loss, char *err,
                         size_t errlen) {
  char name[64];
  snprintf(name, sizeof name, "%s_%s", s->name, with_loss ? "loss" : "logits");
  cxla_module *m = cxla_module_create(ctx, name);
  if (!m) {
    snprintf(err, errlen, "cannot create module %s: %s", name, cxla_context_errmsg(ctx));
    return NULL;
  }
  net n = {NULL, reducer(m, "add", "add"), reducer(m, "max", "maximum")};
  if (n.add && n.max && (n.b = cxla_builder_create(m, name))) {
    cxla_op w[MAX_WEIGHTS];
    for (int i = 0; i < s->nweights; i++) {
      cxla_shape ws = array_shape(CXLA_F32, s->rank[i], s->dims[i]);
      w[i] = cxla_builder_parameter(n.b, i, &ws, s->weight_name[i]);
    }
    int64_t xd[2] = {batch, IMG_PIXELS};
    cxla_shape xs = array_shape(CXLA_F32, 2, xd), ls = array_shape(CXLA_S32, 1, &batch);
    cxla_op images = cxla_builder_parameter(n.b, s->nweights, &xs, "images");
    cxla_op root = logits_of(&n, s, w, images, batch);
    if (with_loss) root = xent(&n, root, cxla_builder_parameter(n.b, s->nweights + 1, &ls, "labels"), batch);
    if (cxla_builder_finish(n.b, root, 1, NULL) == CXLA_OK) return m;
  }
  snprintf(err, errlen, "building %s: %s", name, cxla_context_errmsg(ctx));
  cxla_module_destroy(m);
  return NULL;
}

/* ---- seeded initialisation ---- */
uint64_t rng_next(rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

double rng_normal(rng *r) {
  double u = 1.0 - rng_uniform(r), v = rng_uniform(r);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void model_init_weight(const model_spec *s, int i, rng *r, float *out) {
  int64_t count = model_weight_count(s, i);
  double fin = (double)s->fan_in[i], fout = (double)s->fan_out[i];
  for (int64_t j = 0; j < count; j++) {
    if (s->fan_in[i] == 0)
      out[j] = 0.0f;
    else if (s->he[i])
      out[j] = (float)(rng_normal(r) * sqrt(2.0 / fin));
    else
      out[j] = (float)((2.0 * rng_uniform(r) - 1.0) * sqrt(6.0 / (fin + fout)));
  }
}
