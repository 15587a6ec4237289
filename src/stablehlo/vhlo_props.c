/* vhlo_props.c — written by scripts/vhlo_prop_names.py from StableHLO's VhloOps.td (the
 * commit jaxlib 0.10.2 uses): the attribute names each vhlo op keeps in its MLIR properties,
 * in stored order (sorted by name). The bytecode stores only the values, so these names are
 * what gives them meaning. Do not edit; rerun the script. */
#include <stdlib.h>
#include <string.h>
#include "stablehlo/bytecode_int.h"

static const char *const p_all_gather_v1[] = {"all_gather_dim", "channel_id", "replica_groups", "use_global_device_ids"};
static const char *const p_all_gather_v2[] = {"all_gather_dim", "channel_id", "replica_groups", "use_global_device_ids"};
static const char *const p_all_reduce_v1[] = {"channel_id", "replica_groups", "use_global_device_ids"};
static const char *const p_all_reduce_v2[] = {"channel_id", "replica_groups", "use_global_device_ids"};
static const char *const p_all_to_all_v1[] = {"channel_id", "concat_dimension", "replica_groups", "split_count", "split_dimension"};
static const char *const p_all_to_all_v2[] = {"channel_id", "concat_dimension", "replica_groups", "split_count", "split_dimension"};
static const char *const p_batch_norm_grad_v1[] = {"epsilon", "feature_index"};
static const char *const p_batch_norm_inference_v1[] = {"epsilon", "feature_index"};
static const char *const p_batch_norm_training_v1[] = {"epsilon", "feature_index"};
static const char *const p_broadcast_in_dim_v1[] = {"broadcast_dimensions"};
static const char *const p_broadcast_v1[] = {"broadcast_sizes"};
static const char *const p_call_v1[] = {"callee"};
static const char *const p_cbrt_v2[] = {"result_accuracy"};
static const char *const p_cholesky_v1[] = {"lower"};
static const char *const p_collective_broadcast_v1[] = {"channel_id", "replica_groups"};
static const char *const p_collective_permute_v1[] = {"channel_id", "source_target_pairs"};
static const char *const p_compare_v1[] = {"compare_type", "comparison_direction"};
static const char *const p_composite_v1[] = {"composite_attributes", "decomposition", "name", "version"};
static const char *const p_composite_v2[] = {"composite_attributes", "decomposition", "name", "version"};
static const char *const p_concatenate_v1[] = {"dimension"};
static const char *const p_constant_v1[] = {"value"};
static const char *const p_convolution_v1[] = {"batch_group_count", "feature_group_count", "input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions", "kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions", "lhs_dilation", "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions", "padding", "precision_config", "rhs_dilation", "window_reversal", "window_strides"};
static const char *const p_cosine_v2[] = {"result_accuracy"};
static const char *const p_cross_replica_sum_v1[] = {"replica_groups"};
static const char *const p_custom_call_v1[] = {"api_version", "backend_config", "call_target_name", "called_computations", "has_side_effect", "operand_layouts", "output_operand_aliases", "result_layouts"};
static const char *const p_dot_general_v1[] = {"lhs_batching_dimensions", "lhs_contracting_dimensions", "precision_config", "rhs_batching_dimensions", "rhs_contracting_dimensions"};
static const char *const p_dot_general_v2[] = {"accumulation_type", "allow_imprecise_accumulation", "lhs_batching_dimensions", "lhs_component_count", "lhs_contracting_dimensions", "lhs_precision_type", "num_primitive_operations", "precision_config", "rhs_batching_dimensions", "rhs_component_count", "rhs_contracting_dimensions", "rhs_precision_type"};
static const char *const p_dot_v1[] = {"precision_config"};
static const char *const p_dynamic_broadcast_in_dim_v1[] = {"broadcast_dimensions", "known_expanding_dimensions", "known_nonexpanding_dimensions"};
static const char *const p_dynamic_conv_v1[] = {"batch_group_count", "feature_group_count", "input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions", "kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions", "lhs_dilation", "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions", "padding", "precision_config", "rhs_dilation", "window_reversal", "window_strides"};
static const char *const p_dynamic_conv_v2[] = {"batch_group_count", "feature_group_count", "input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions", "kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions", "lhs_dilation", "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions", "precision_config", "rhs_dilation", "window_reversal", "window_strides"};
static const char *const p_dynamic_gather_v1[] = {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims", "start_index_map"};
static const char *const p_dynamic_gather_v2[] = {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims", "operand_batching_dims", "start_index_map", "start_indices_batching_dims"};
static const char *const p_dynamic_iota_v1[] = {"iota_dimension"};
static const char *const p_dynamic_slice_v1[] = {"slice_sizes"};
static const char *const p_einsum_v1[] = {"einsum_config"};
static const char *const p_exponential_minus_one_v2[] = {"result_accuracy"};
static const char *const p_exponential_v2[] = {"result_accuracy"};
static const char *const p_fft_v1[] = {"fft_length", "fft_type"};
static const char *const p_func_v1[] = {"arg_attrs", "function_type", "res_attrs", "sym_name", "sym_visibility"};
static const char *const p_gather_v1[] = {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims", "slice_sizes", "start_index_map"};
static const char *const p_gather_v2[] = {"collapsed_slice_dims", "index_vector_dim", "indices_are_sorted", "offset_dims", "operand_batching_dims", "slice_sizes", "start_index_map", "start_indices_batching_dims"};
static const char *const p_get_dimension_size_v1[] = {"dimension"};
static const char *const p_get_tuple_element_v1[] = {"index"};
static const char *const p_infeed_v1[] = {"infeed_config", "layout"};
static const char *const p_iota_v1[] = {"iota_dimension"};
static const char *const p_log_plus_one_v2[] = {"result_accuracy"};
static const char *const p_log_v2[] = {"result_accuracy"};
static const char *const p_logistic_v2[] = {"result_accuracy"};
static const char *const p_map_v1[] = {"dimensions"};
static const char *const p_outfeed_v1[] = {"outfeed_config"};
static const char *const p_pad_v1[] = {"edge_padding_high", "edge_padding_low", "interior_padding"};
static const char *const p_recv_v1[] = {"channel_id", "channel_type", "is_host_transfer"};
static const char *const p_recv_v2[] = {"channel_id", "channel_type", "is_host_transfer", "source_target_pairs"};
static const char *const p_reduce_precision_v1[] = {"exponent_bits", "mantissa_bits"};
static const char *const p_reduce_scatter_v1[] = {"channel_id", "replica_groups", "scatter_dimension", "use_global_device_ids"};
static const char *const p_reduce_v1[] = {"dimensions"};
static const char *const p_reduce_window_v1[] = {"base_dilations", "padding", "window_dilations", "window_dimensions", "window_strides"};
static const char *const p_reverse_v1[] = {"dimensions"};
static const char *const p_rng_bit_generator_v1[] = {"rng_algorithm"};
static const char *const p_rng_v1[] = {"rng_distribution"};
static const char *const p_rsqrt_v2[] = {"result_accuracy"};
static const char *const p_scatter_v1[] = {"index_vector_dim", "indices_are_sorted", "inserted_window_dims", "scatter_dims_to_operand_dims", "unique_indices", "update_window_dims"};
static const char *const p_scatter_v2[] = {"index_vector_dim", "indices_are_sorted", "input_batching_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "scatter_indices_batching_dims", "unique_indices", "update_window_dims"};
static const char *const p_select_and_scatter_v1[] = {"padding", "window_dimensions", "window_strides"};
static const char *const p_send_v1[] = {"channel_id", "channel_type", "is_host_transfer"};
static const char *const p_send_v2[] = {"channel_id", "channel_type", "is_host_transfer", "source_target_pairs"};
static const char *const p_set_dimension_size_v1[] = {"dimension"};
static const char *const p_sine_v2[] = {"result_accuracy"};
static const char *const p_slice_v1[] = {"limit_indices", "start_indices", "strides"};
static const char *const p_sort_v1[] = {"dimension", "is_stable"};
static const char *const p_sqrt_v2[] = {"result_accuracy"};
static const char *const p_tan_v2[] = {"result_accuracy"};
static const char *const p_tanh_v2[] = {"result_accuracy"};
static const char *const p_torch_index_select_v1[] = {"batch_dims", "dim"};
static const char *const p_transpose_v1[] = {"permutation"};
static const char *const p_triangular_solve_v1[] = {"left_side", "lower", "transpose_a", "unit_diagonal"};
static const char *const p_unary_einsum_v1[] = {"einsum_config"};

static const struct {
  const char *op;
  int n;
  const char *const *names;
} ops[] = {
    {"abs_v1", 0, NULL},
    {"add_v1", 0, NULL},
    {"after_all_v1", 0, NULL},
    {"all_gather_v1", 4, p_all_gather_v1},
    {"all_gather_v2", 4, p_all_gather_v2},
    {"all_reduce_v1", 3, p_all_reduce_v1},
    {"all_reduce_v2", 3, p_all_reduce_v2},
    {"all_to_all_v1", 5, p_all_to_all_v1},
    {"all_to_all_v2", 5, p_all_to_all_v2},
    {"and_v1", 0, NULL},
    {"async_done_v1", 0, NULL},
    {"async_start_v1", 0, NULL},
    {"atan2_v1", 0, NULL},
    {"batch_norm_grad_v1", 2, p_batch_norm_grad_v1},
    {"batch_norm_inference_v1", 2, p_batch_norm_inference_v1},
    {"batch_norm_training_v1", 2, p_batch_norm_training_v1},
    {"bitcast_convert_v1", 0, NULL},
    {"broadcast_in_dim_v1", 1, p_broadcast_in_dim_v1},
    {"broadcast_v1", 1, p_broadcast_v1},
    {"call_v1", 1, p_call_v1},
    {"case_v1", 0, NULL},
    {"cbrt_v1", 0, NULL},
    {"cbrt_v2", 1, p_cbrt_v2},
    {"ceil_v1", 0, NULL},
    {"cholesky_v1", 1, p_cholesky_v1},
    {"clamp_v1", 0, NULL},
    {"collective_broadcast_v1", 2, p_collective_broadcast_v1},
    {"collective_permute_v1", 2, p_collective_permute_v1},
    {"compare_v1", 2, p_compare_v1},
    {"complex_v1", 0, NULL},
    {"composite_v1", 4, p_composite_v1},
    {"composite_v2", 4, p_composite_v2},
    {"concatenate_v1", 1, p_concatenate_v1},
    {"constant_v1", 1, p_constant_v1},
    {"convert_v1", 0, NULL},
    {"convolution_v1", 17, p_convolution_v1},
    {"cosine_v1", 0, NULL},
    {"cosine_v2", 1, p_cosine_v2},
    {"count_leading_zeros_v1", 0, NULL},
    {"create_token_v1", 0, NULL},
    {"cross-replica-sum_v1", 1, p_cross_replica_sum_v1},
    {"custom_call_v1", 8, p_custom_call_v1},
    {"divide_v1", 0, NULL},
    {"dot_general_v1", 5, p_dot_general_v1},
    {"dot_general_v2", 12, p_dot_general_v2},
    {"dot_v1", 1, p_dot_v1},
    {"dynamic_broadcast_in_dim_v1", 3, p_dynamic_broadcast_in_dim_v1},
    {"dynamic_conv_v1", 17, p_dynamic_conv_v1},
    {"dynamic_conv_v2", 16, p_dynamic_conv_v2},
    {"dynamic_gather_v1", 5, p_dynamic_gather_v1},
    {"dynamic_gather_v2", 7, p_dynamic_gather_v2},
    {"dynamic_iota_v1", 1, p_dynamic_iota_v1},
    {"dynamic_pad_v1", 0, NULL},
    {"dynamic_reshape_v1", 0, NULL},
    {"dynamic_slice_v1", 1, p_dynamic_slice_v1},
    {"dynamic_update_slice_v1", 0, NULL},
    {"einsum_v1", 1, p_einsum_v1},
    {"exponential_minus_one_v1", 0, NULL},
    {"exponential_minus_one_v2", 1, p_exponential_minus_one_v2},
    {"exponential_v1", 0, NULL},
    {"exponential_v2", 1, p_exponential_v2},
    {"fft_v1", 2, p_fft_v1},
    {"floor_v1", 0, NULL},
    {"func_v1", 5, p_func_v1},
    {"gather_v1", 6, p_gather_v1},
    {"gather_v2", 8, p_gather_v2},
    {"get_dimension_size_v1", 1, p_get_dimension_size_v1},
    {"get_tuple_element_v1", 1, p_get_tuple_element_v1},
    {"if_v1", 0, NULL},
    {"imag_v1", 0, NULL},
    {"infeed_v1", 2, p_infeed_v1},
    {"iota_v1", 1, p_iota_v1},
    {"is_finite_v1", 0, NULL},
    {"log_plus_one_v1", 0, NULL},
    {"log_plus_one_v2", 1, p_log_plus_one_v2},
    {"log_v1", 0, NULL},
    {"log_v2", 1, p_log_v2},
    {"logistic_v1", 0, NULL},
    {"logistic_v2", 1, p_logistic_v2},
    {"map_v1", 1, p_map_v1},
    {"maximum_v1", 0, NULL},
    {"minimum_v1", 0, NULL},
    {"multiply_v1", 0, NULL},
    {"negate_v1", 0, NULL},
    {"not_v1", 0, NULL},
    {"optimization_barrier_v1", 0, NULL},
    {"or_v1", 0, NULL},
    {"outfeed_v1", 1, p_outfeed_v1},
    {"pad_v1", 3, p_pad_v1},
    {"partition_id_v1", 0, NULL},
    {"popcnt_v1", 0, NULL},
    {"power_v1", 0, NULL},
    {"real_dynamic_slice_v1", 0, NULL},
    {"real_v1", 0, NULL},
    {"recv_v1", 3, p_recv_v1},
    {"recv_v2", 4, p_recv_v2},
    {"reduce_precision_v1", 2, p_reduce_precision_v1},
    {"reduce_scatter_v1", 4, p_reduce_scatter_v1},
    {"reduce_v1", 1, p_reduce_v1},
    {"reduce_window_v1", 5, p_reduce_window_v1},
    {"remainder_v1", 0, NULL},
    {"replica_id_v1", 0, NULL},
    {"reshape_v1", 0, NULL},
    {"return_v1", 0, NULL},
    {"reverse_v1", 1, p_reverse_v1},
    {"rng_bit_generator_v1", 1, p_rng_bit_generator_v1},
    {"rng_v1", 1, p_rng_v1},
    {"round_nearest_afz_v1", 0, NULL},
    {"round_nearest_even_v1", 0, NULL},
    {"rsqrt_v1", 0, NULL},
    {"rsqrt_v2", 1, p_rsqrt_v2},
    {"scatter_v1", 6, p_scatter_v1},
    {"scatter_v2", 8, p_scatter_v2},
    {"select_and_scatter_v1", 3, p_select_and_scatter_v1},
    {"select_v1", 0, NULL},
    {"send_v1", 3, p_send_v1},
    {"send_v2", 4, p_send_v2},
    {"set_dimension_size_v1", 1, p_set_dimension_size_v1},
    {"shift_left_v1", 0, NULL},
    {"shift_right_arithmetic_v1", 0, NULL},
    {"shift_right_logical_v1", 0, NULL},
    {"sign_v1", 0, NULL},
    {"sine_v1", 0, NULL},
    {"sine_v2", 1, p_sine_v2},
    {"slice_v1", 3, p_slice_v1},
    {"sort_v1", 2, p_sort_v1},
    {"sqrt_v1", 0, NULL},
    {"sqrt_v2", 1, p_sqrt_v2},
    {"subtract_v1", 0, NULL},
    {"tan_v1", 0, NULL},
    {"tan_v2", 1, p_tan_v2},
    {"tanh_v1", 0, NULL},
    {"tanh_v2", 1, p_tanh_v2},
    {"torch_index_select_v1", 2, p_torch_index_select_v1},
    {"transpose_v1", 1, p_transpose_v1},
    {"triangular_solve_v1", 4, p_triangular_solve_v1},
    {"tuple_v1", 0, NULL},
    {"unary_einsum_v1", 1, p_unary_einsum_v1},
    {"uniform_dequantize_v1", 0, NULL},
    {"uniform_quantize_v1", 0, NULL},
    {"while_v1", 0, NULL},
    {"xor_v1", 0, NULL},
};

static int cmp(const void *k, const void *e) {
  return strcmp((const char *)k, *(const char *const *)e);
}

int cx_vhlo_prop_names(const char *opname, const char *const **names) {
  if (strncmp(opname, "vhlo.", 5) != 0) return -1;
  const void *e = bsearch(opname + 5, ops, sizeof ops / sizeof ops[0], sizeof ops[0], cmp);
  if (!e) return -1;
  size_t i = (size_t)((const char *)e - (const char *)ops) / sizeof ops[0];
  *names = ops[i].names;
  return ops[i].n;
}
