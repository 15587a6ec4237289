/* attr_keys.c — the keys of ir/attrs.def as a table, what each syntax holds, and which keys
 * each op's text carries (XLA's printer order; required where XLA's parser requires them). */
#include <string.h>
#include "text/attr_keys.h"

const cx_attr_key cx_attr_keys[CX_KEY_COUNT] = {
#define CX_ATTR_KEY(id, key, field, syntax, show, what) \
  [CX_KEY_##id] = {key, CX_ATTR_##field, CX_SYN_##syntax, CX_SHOW_##show, what},
#include "ir/attrs.def"
};

static const cx_attr_syntax_info k_syntax[CX_SYN_COUNT] = {
    [CX_SYN_INTS] = {CX_ATTR_KIND_INTS, 1, 0},
    [CX_SYN_I64] = {CX_ATTR_KIND_POD, 1, sizeof(int64_t)},
    [CX_SYN_I32] = {CX_ATTR_KIND_POD, 1, sizeof(int)},
    [CX_SYN_F32] = {CX_ATTR_KIND_POD, 1, sizeof(int32_t)}, /* the float's bits */
    [CX_SYN_BOOL] = {CX_ATTR_KIND_POD, 1, sizeof(int)},
    [CX_SYN_ENUM] = {CX_ATTR_KIND_POD, 1, sizeof(int)},
    [CX_SYN_SLICE] = {CX_ATTR_KIND_INTS, 3, 0},
    [CX_SYN_PADDING] = {CX_ATTR_KIND_INTS, 3, 0},
    [CX_SYN_WINDOW] = {CX_ATTR_KIND_WINDOW, 1, 0},
    [CX_SYN_DIM_LABELS] = {CX_ATTR_KIND_CONV, 1, 0},
    [CX_SYN_WORD] = {CX_ATTR_KIND_STR, 1, 0},
    [CX_SYN_STRING] = {CX_ATTR_KIND_STR, 1, 0},
    [CX_SYN_VERBATIM] = {CX_ATTR_KIND_STR, 1, 0},
    [CX_SYN_COMP] = {CX_ATTR_KIND_POD, 0, 0}, /* no field: cx_instr's called[] */
    [CX_SYN_BRANCHES] = {CX_ATTR_KIND_POD, 0, 0},
    [CX_SYN_GROUPS] = {CX_ATTR_KIND_GROUPS, 1, 0},
};

const cx_attr_syntax_info *cx_attr_syntax_of(cx_attr_syntax s) { return &k_syntax[s]; }

static const char *const k_dir_names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
static const char *const k_fft_type_names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
static const char *const k_cmp_type_names[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
static const char *const k_transpose_names[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
static const char *const k_rng_algorithm_names[] = {"rng_default", "rng_three_fry", "rng_philox"};
static const char *const k_rng_distribution_names[] = {"rng_uniform", "rng_normal"};

/* The names of every ENUM key's values (XLA's spellings). */
static const cx_attr_enum k_enums[CX_KEY_COUNT] = {
    [CX_KEY_DIRECTION] = {k_dir_names, CX_ARRAY_LEN(k_dir_names), CXLA_EQ},
    [CX_KEY_FFT_TYPE] = {k_fft_type_names, CX_ARRAY_LEN(k_fft_type_names), CX_FFT_FFT},
    [CX_KEY_TYPE] = {k_cmp_type_names, CX_ARRAY_LEN(k_cmp_type_names), CX_CMP_FLOAT},
    [CX_KEY_TRANSPOSE_A] = {k_transpose_names, CX_ARRAY_LEN(k_transpose_names), CX_TRANSPOSE_NO},
    [CX_KEY_ALGORITHM] = {k_rng_algorithm_names, CX_ARRAY_LEN(k_rng_algorithm_names), CX_RNG_DEFAULT},
    [CX_KEY_DISTRIBUTION] = {k_rng_distribution_names, CX_ARRAY_LEN(k_rng_distribution_names), CX_RNG_UNIFORM},
    [CX_KEY_KIND] = {cx_fusion_kind_names + 1, CX_FUSION_KINDS - 1, CX_FUSION_LOOP}, /* XLA refuses others too */
};

const cx_attr_enum *cx_attr_key_enum(cx_attr_key_id k) { return &k_enums[k]; }

/* Entries are key + 1 (0 ends a row), REQUIRED added for the ones XLA's parser requires. */
#define REQUIRED 0x80
#define O(k) (CX_KEY_##k + 1)
#define R(k) (CX_KEY_##k + 1 + REQUIRED)
_Static_assert(CX_KEY_COUNT + 1 < REQUIRED, "op table entries hold a key in 7 bits");

static const unsigned char k_op_keys[CX_OP_COUNT][CX_OP_MAX_KEYS] = {
    [CX_OP_BROADCAST] = {O(DIMENSIONS)}, /* a scalar operand needs none (checked late) */
    [CX_OP_TRANSPOSE] = {R(DIMENSIONS)},
    [CX_OP_REVERSE] = {R(DIMENSIONS)},
    [CX_OP_CONCATENATE] = {R(DIMENSIONS)},
    [CX_OP_REDUCE] = {R(DIMENSIONS), R(TO_APPLY)},
    [CX_OP_MAP] = {O(MAP_DIMENSIONS), R(TO_APPLY)},
    [CX_OP_SORT] = {R(DIMENSIONS), O(IS_STABLE), R(TO_APPLY)},
    [CX_OP_GET_TUPLE_ELEMENT] = {R(INDEX)},
    [CX_OP_IOTA] = {R(IOTA_DIMENSION)},
    [CX_OP_COMPARE] = {R(DIRECTION), O(TYPE)},
    [CX_OP_SLICE] = {R(SLICE)},
    [CX_OP_PAD] = {R(PADDING)},
    [CX_OP_DYNAMIC_SLICE] = {R(DYNAMIC_SLICE_SIZES)},
    [CX_OP_DOT] = {O(LHS_BATCH_DIMS), O(LHS_CONTRACTING_DIMS), O(RHS_BATCH_DIMS), O(RHS_CONTRACTING_DIMS)},
    [CX_OP_RAGGED_DOT] = {O(LHS_BATCH_DIMS), O(LHS_CONTRACTING_DIMS), O(RHS_BATCH_DIMS), O(RHS_CONTRACTING_DIMS),
                          O(LHS_RAGGED_DIMS), O(RHS_GROUP_DIMS)}, /* all optional, as in XLA */
    [CX_OP_SCALED_DOT] = {O(LHS_BATCH_DIMS), O(LHS_CONTRACTING_DIMS), O(RHS_BATCH_DIMS), O(RHS_CONTRACTING_DIMS)},
    [CX_OP_CONVOLUTION] = {O(WINDOW), O(DIM_LABELS), O(FEATURE_GROUP_COUNT), O(BATCH_GROUP_COUNT)},
    [CX_OP_REDUCE_WINDOW] = {O(WINDOW), R(TO_APPLY)},
    [CX_OP_SELECT_AND_SCATTER] = {O(WINDOW), R(SELECT), R(SCATTER)},
    [CX_OP_GATHER] = {R(OFFSET_DIMS), R(COLLAPSED_SLICE_DIMS), R(START_INDEX_MAP), O(OPERAND_BATCHING_DIMS),
                      O(START_INDICES_BATCHING_DIMS), R(GATHER_INDEX_VECTOR_DIM), R(SLICE_SIZES),
                      O(GATHER_INDICES_ARE_SORTED)},
    [CX_OP_SCATTER] = {R(UPDATE_WINDOW_DIMS), R(INSERTED_WINDOW_DIMS), R(SCATTER_DIMS_TO_OPERAND_DIMS),
                       O(INPUT_BATCHING_DIMS), O(SCATTER_INDICES_BATCHING_DIMS), R(SCATTER_INDEX_VECTOR_DIM),
                       O(SCATTER_INDICES_ARE_SORTED), O(UNIQUE_INDICES), R(TO_APPLY)},
    [CX_OP_REDUCE_PRECISION] = {R(EXPONENT_BITS), R(MANTISSA_BITS)},
    [CX_OP_FFT] = {R(FFT_TYPE), R(FFT_LENGTH)},
    [CX_OP_FUSION] = {R(KIND), R(CALLS)},
    [CX_OP_CUSTOM_CALL] = {R(CUSTOM_CALL_TARGET), O(BACKEND_CONFIG)}, /* what a known target reads */
    /* XLA prints the options' fields that differ from the proto's defaults */
    [CX_OP_CHOLESKY] = {O(LOWER)},
    [CX_OP_TRIANGULAR_SOLVE] = {O(LEFT_SIDE), O(LOWER), O(UNIT_DIAGONAL), O(TRANSPOSE_A)},
    [CX_OP_BATCH_NORM_TRAINING] = {R(EPSILON), R(FEATURE_INDEX)},
    [CX_OP_BATCH_NORM_INFERENCE] = {R(EPSILON), R(FEATURE_INDEX)},
    [CX_OP_BATCH_NORM_GRAD] = {R(EPSILON), R(FEATURE_INDEX)},
    [CX_OP_TOPK] = {R(K), O(LARGEST)},
    [CX_OP_RNG_BIT_GENERATOR] = {R(ALGORITHM)},
    [CX_OP_RNG] = {R(DISTRIBUTION)},
    [CX_OP_CALL] = {R(TO_APPLY)},
    [CX_OP_SCAN] = {R(DIMENSIONS), R(NUM_CARRIES), O(IS_REVERSE), R(TO_APPLY)},
    /* the collectives, in XLA's print order */
    [CX_OP_ALL_REDUCE] = {O(CHANNEL_ID), O(REPLICA_GROUPS), O(USE_GLOBAL_DEVICE_IDS), R(TO_APPLY)},
    [CX_OP_ALL_REDUCE_START] = {O(CHANNEL_ID), O(REPLICA_GROUPS), O(USE_GLOBAL_DEVICE_IDS), R(TO_APPLY)},
    [CX_OP_ALL_GATHER] = {O(CHANNEL_ID), O(REPLICA_GROUPS), R(DIMENSIONS), O(USE_GLOBAL_DEVICE_IDS)},
    [CX_OP_ALL_GATHER_START] = {O(CHANNEL_ID), O(REPLICA_GROUPS), R(DIMENSIONS), O(USE_GLOBAL_DEVICE_IDS)},
    [CX_OP_REDUCE_SCATTER] = {O(CHANNEL_ID), O(REPLICA_GROUPS), O(USE_GLOBAL_DEVICE_IDS), R(DIMENSIONS),
                              R(TO_APPLY)},
    [CX_OP_ALL_TO_ALL] = {O(CHANNEL_ID), O(REPLICA_GROUPS), O(MAP_DIMENSIONS)}, /* dimensions= only in the array form */
    [CX_OP_COLLECTIVE_BROADCAST] = {O(CHANNEL_ID), O(REPLICA_GROUPS)},
    [CX_OP_COLLECTIVE_PERMUTE] = {O(CHANNEL_ID), R(SOURCE_TARGET_PAIRS)},
    [CX_OP_COLLECTIVE_PERMUTE_START] = {O(CHANNEL_ID), R(SOURCE_TARGET_PAIRS)},
    [CX_OP_SEND] = {O(CHANNEL_ID), O(IS_HOST_TRANSFER)},
    [CX_OP_SEND_DONE] = {O(CHANNEL_ID), O(IS_HOST_TRANSFER)},
    [CX_OP_RECV] = {O(CHANNEL_ID), O(IS_HOST_TRANSFER)},
    [CX_OP_RECV_DONE] = {O(CHANNEL_ID), O(IS_HOST_TRANSFER)},
    [CX_OP_ASYNC_START] = {R(CALLS)},
    [CX_OP_ASYNC_UPDATE] = {O(CALLS)}, /* else the chain's */
    [CX_OP_ASYNC_DONE] = {O(CALLS)},
    [CX_OP_WHILE] = {R(CONDITION), R(BODY)},
    /* the pair form (a pred operand) or the list; the parser and printer pick one */
    [CX_OP_CONDITIONAL] = {O(TRUE_COMPUTATION), O(FALSE_COMPUTATION), O(BRANCH_COMPUTATIONS)},
};

int cx_op_attr_keys(cx_op op, cx_op_key out[CX_OP_MAX_KEYS]) {
  int n = 0;
  for (; n < CX_OP_MAX_KEYS && k_op_keys[op][n]; n++) {
    out[n].key = (cx_attr_key_id)((k_op_keys[op][n] & ~REQUIRED) - 1);
    out[n].required = (k_op_keys[op][n] & REQUIRED) != 0;
  }
  return n;
}

int cx_op_attr_key_lookup(cx_op op, const char *s, size_t len) {
  for (int i = 0; i < CX_OP_MAX_KEYS && k_op_keys[op][i]; i++) {
    int k = (k_op_keys[op][i] & ~REQUIRED) - 1;
    const char *name = cx_attr_keys[k].name;
    if (name[0] == s[0] && !strncmp(name, s, len) && !name[len]) return k;
  }
  return -1;
}
