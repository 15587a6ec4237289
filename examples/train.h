/* train.h — what the parts of examples/train share: the data set (train_idx.c), the three
 * models built with cxla's builder API (train_models.c) and the training program (train.c).
 * Everything here uses the public header only, as any program linked against libcxla would. */
#ifndef TRAIN_H
#define TRAIN_H
#include <stdint.h>
#include <stdio.h>
#include "cxla.h"

#define IMG_SIDE 28
#define IMG_PIXELS (IMG_SIDE * IMG_SIDE)
#define NUM_CLASSES 10

/* One split of an MNIST-format data set: n images of 28x28 bytes, row-major, and n labels. */
typedef struct {
  int64_t n;
  uint8_t *pixels; /* n * IMG_PIXELS */
  uint8_t *labels; /* n, each < NUM_CLASSES */
} split;

/* Reads DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte, each gzip-compressed (".gz") or
 * plain. On any problem (a missing file, a wrong magic number, a truncated or corrupt file,
 * counts or sizes that do not match) writes one line to `err` and returns 0. */
int idx_load(const char *dir, split *train, split *test, char *err, size_t errlen);
void split_free(split *s);

/* ---- models ---- */
typedef enum { MODEL_SOFTMAX, MODEL_MLP, MODEL_CNN, MODEL_COUNT } model_kind;

#define MAX_WEIGHTS 8

/* A model's weights as the builder declares them: ENTRY parameters 0..nweights-1, then the
 * batch (images f32[batch, 784], and for the loss the labels s32[batch]). */
typedef struct {
  model_kind kind;
  const char *name;        /* "softmax", "mlp", "cnn" */
  const char *description; /* one line */
  int nweights;
  const char *weight_name[MAX_WEIGHTS];
  int rank[MAX_WEIGHTS];
  int64_t dims[MAX_WEIGHTS][4];
  int64_t fan_in[MAX_WEIGHTS], fan_out[MAX_WEIGHTS]; /* 0 fan_in: a bias, starts at zero */
  int he[MAX_WEIGHTS];                               /* He (ReLU follows), else Glorot */
} model_spec;

const model_spec *model_get(model_kind kind);
int64_t model_weight_count(const model_spec *s, int i);

/* The model as a new module: with_loss, ENTRY(weights..., images, labels) -> mean softmax
 * cross-entropy f32[]; otherwise ENTRY(weights..., images) -> logits f32[batch, 10]. NULL
 * with the builder's message in `err` on failure. */
cxla_module *model_build(cxla_context *ctx, const model_spec *s, int64_t batch, int with_loss, char *err,
                         size_t errlen);

/* data[0..prod(dims)) as a .npy file of f32 in C order at path; 0 with one line in err on
 * failure (train_npy.c). */
int npy_write_f32(const char *path, const float *data, int rank, const int64_t *dims, char *err, size_t errlen);

/* A seeded generator (splitmix64) for weights and shuffling: the same seed, the same run. */
typedef struct { uint64_t s; } rng;
uint64_t rng_next(rng *r);
double rng_uniform(rng *r); /* [0, 1) */
double rng_normal(rng *r);

/* Fills weight i of the model: He normal (std sqrt(2 / fan_in)) before a ReLU, Glorot uniform
 * (limit sqrt(6 / (fan_in + fan_out))) otherwise, zeros for biases. */
void model_init_weight(const model_spec *s, int i, rng *r, float *out);

#endif
