// RUN: dequant-opt %s | dequant-opt | FileCheck %s
// RUN: dequant-opt %s --mlir-print-op-generic | dequant-opt | FileCheck %s

// Parse/print round trips of dq.pmx_dequantize_linear (OpenPPL ppl.pmx DequantizeLinear, as
// docs/semantics.md#openppl-dequantizelinear reads it). `quant_data_type` is required; `quant_method` (""), `quant_axis` (1),
// `group_size` (128), `has_zeropoint` (false), `float_zeropoint` (false) take the spec
// defaults when left out, and stay out. int4 X is i16 packing four values along dim 0: Y's
// dim 0 is 4 * X's. Y has the Scale's type (f32 or f16).

// ---- Group quantization (group_size != 0).

// All defaults: groups of 128 along axis 1; Scale is Y's shape with dim 1 / 128.
// CHECK-LABEL: func.func @int8_group_defaults(
// CHECK-SAME: %[[X:.*]]: tensor<4x256xi8>, %[[S:.*]]: tensor<4x2xf32>) -> tensor<4x256xf32>
// CHECK: %[[Y:.*]] = "dq.pmx_dequantize_linear"(%[[X]], %[[S]]) {quant_data_type = "int8"} : (tensor<4x256xi8>, tensor<4x2xf32>) -> tensor<4x256xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4x256xf32>
func.func @int8_group_defaults(%x: tensor<4x256xi8>, %s: tensor<4x2xf32>) -> tensor<4x256xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8"} : (tensor<4x256xi8>, tensor<4x2xf32>) -> tensor<4x256xf32>
  return %y : tensor<4x256xf32>
}

// Every attribute given, with its default value.
// CHECK-LABEL: func.func @int8_all_defaults_given(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {float_zeropoint = false, group_size = 128 : i64, has_zeropoint = false, quant_axis = 1 : i64, quant_data_type = "int8", quant_method = ""} : (tensor<4x256xi8>, tensor<4x2xf32>) -> tensor<4x256xf32>
func.func @int8_all_defaults_given(%x: tensor<4x256xi8>, %s: tensor<4x2xf32>) -> tensor<4x256xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", quant_method = "", quant_axis = 1 : i64, group_size = 128 : i64, has_zeropoint = false, float_zeropoint = false} : (tensor<4x256xi8>, tensor<4x2xf32>) -> tensor<4x256xf32>
  return %y : tensor<4x256xf32>
}

// quant_method is accepted and ignored; groups of 2 along axis 0, f16 Scale and Y.
// CHECK-LABEL: func.func @int8_group_axis0(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {group_size = 2 : i64, quant_axis = 0 : i64, quant_data_type = "int8", quant_method = "weight_only"} : (tensor<8x16xi8>, tensor<4x16xf16>) -> tensor<8x16xf16>
func.func @int8_group_axis0(%x: tensor<8x16xi8>, %s: tensor<4x16xf16>) -> tensor<8x16xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", quant_method = "weight_only", quant_axis = 0 : i64, group_size = 2 : i64} : (tensor<8x16xi8>, tensor<4x16xf16>) -> tensor<8x16xf16>
  return %y : tensor<8x16xf16>
}

// A group as large as the dimension, rank 3 (dims after quant_axis keep their size).
// CHECK-LABEL: func.func @int8_group_rank3(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {group_size = 4 : i64, quant_data_type = "int8"} : (tensor<2x4x8xi8>, tensor<2x1x8xf32>) -> tensor<2x4x8xf32>
func.func @int8_group_rank3(%x: tensor<2x4x8xi8>, %s: tensor<2x1x8xf32>) -> tensor<2x4x8xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 4 : i64} : (tensor<2x4x8xi8>, tensor<2x1x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// Integer (int8) zero point of the Scale's shape.
// CHECK-LABEL: func.func @int8_group_int_zero_point(
// CHECK-SAME: %[[X:.*]]: tensor<4x256xi8>, %[[S:.*]]: tensor<4x2xf32>, %[[Z:.*]]: tensor<4x2xi8>) -> tensor<4x256xf32>
// CHECK: "dq.pmx_dequantize_linear"(%[[X]], %[[S]], %[[Z]]) {has_zeropoint = true, quant_data_type = "int8"} : (tensor<4x256xi8>, tensor<4x2xf32>, tensor<4x2xi8>) -> tensor<4x256xf32>
func.func @int8_group_int_zero_point(%x: tensor<4x256xi8>, %s: tensor<4x2xf32>, %z: tensor<4x2xi8>) -> tensor<4x256xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", has_zeropoint = true} : (tensor<4x256xi8>, tensor<4x2xf32>, tensor<4x2xi8>) -> tensor<4x256xf32>
  return %y : tensor<4x256xf32>
}

// Float zero points (a bias added after the scaling): f16 and f32, either with either Scale type.
// CHECK-LABEL: func.func @int8_group_float_zero_point_f16(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {float_zeropoint = true, has_zeropoint = true, quant_data_type = "int8"} : (tensor<4x256xi8>, tensor<4x2xf16>, tensor<4x2xf16>) -> tensor<4x256xf16>
func.func @int8_group_float_zero_point_f16(%x: tensor<4x256xi8>, %s: tensor<4x2xf16>, %z: tensor<4x2xf16>) -> tensor<4x256xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", has_zeropoint = true, float_zeropoint = true} : (tensor<4x256xi8>, tensor<4x2xf16>, tensor<4x2xf16>) -> tensor<4x256xf16>
  return %y : tensor<4x256xf16>
}

// CHECK-LABEL: func.func @int8_group_float_zero_point_f32(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {float_zeropoint = true, has_zeropoint = true, quant_data_type = "int8"} : (tensor<4x256xi8>, tensor<4x2xf16>, tensor<4x2xf32>) -> tensor<4x256xf16>
func.func @int8_group_float_zero_point_f32(%x: tensor<4x256xi8>, %s: tensor<4x2xf16>, %z: tensor<4x2xf32>) -> tensor<4x256xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", has_zeropoint = true, float_zeropoint = true} : (tensor<4x256xi8>, tensor<4x2xf16>, tensor<4x2xf32>) -> tensor<4x256xf16>
  return %y : tensor<4x256xf16>
}

// ---- group_size == 0: per-tensor or per-channel, told by the Scale's shape.

// CHECK-LABEL: func.func @int8_per_tensor_scalar(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {group_size = 0 : i64, quant_data_type = "int8"} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
func.func @int8_per_tensor_scalar(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @int8_per_tensor_one(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {group_size = 0 : i64, has_zeropoint = true, quant_data_type = "int8"} : (tensor<4x16xi8>, tensor<1xf16>, tensor<1xi8>) -> tensor<4x16xf16>
func.func @int8_per_tensor_one(%x: tensor<4x16xi8>, %s: tensor<1xf16>, %z: tensor<1xi8>) -> tensor<4x16xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true} : (tensor<4x16xi8>, tensor<1xf16>, tensor<1xi8>) -> tensor<4x16xf16>
  return %y : tensor<4x16xf16>
}

// CHECK-LABEL: func.func @int8_per_tensor_all_ones(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {float_zeropoint = true, group_size = 0 : i64, has_zeropoint = true, quant_data_type = "int8"} : (tensor<4x16xi8>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<4x16xf32>
func.func @int8_per_tensor_all_ones(%x: tensor<4x16xi8>, %s: tensor<1x1xf32>, %z: tensor<1x1xf32>) -> tensor<4x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true, float_zeropoint = true} : (tensor<4x16xi8>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// Per channel as the spec writes it, (d0, 1); quant_axis is not used without groups.
// CHECK-LABEL: func.func @int8_per_channel_d0_1(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {group_size = 0 : i64, has_zeropoint = true, quant_axis = 0 : i64, quant_data_type = "int8"} : (tensor<4x16xi8>, tensor<4x1xf32>, tensor<4x1xi8>) -> tensor<4x16xf32>
func.func @int8_per_channel_d0_1(%x: tensor<4x16xi8>, %s: tensor<4x1xf32>, %z: tensor<4x1xi8>) -> tensor<4x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", quant_axis = 0 : i64, group_size = 0 : i64, has_zeropoint = true} : (tensor<4x16xi8>, tensor<4x1xf32>, tensor<4x1xi8>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @int8_per_channel_rank1_scale(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {group_size = 0 : i64, quant_data_type = "int8"} : (tensor<4x16xi8>, tensor<4xf16>) -> tensor<4x16xf16>
func.func @int8_per_channel_rank1_scale(%x: tensor<4x16xi8>, %s: tensor<4xf16>) -> tensor<4x16xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<4xf16>) -> tensor<4x16xf16>
  return %y : tensor<4x16xf16>
}

// ---- int4: i16 X packing four values along dim 0, Y's dim 0 = 4 * X's.

// Groups of 128 along axis 1 (defaults): X 2x256 -> Y 8x256, Scale 8x2.
// CHECK-LABEL: func.func @int4_group_defaults(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {quant_data_type = "int4"} : (tensor<2x256xi16>, tensor<8x2xf16>) -> tensor<8x256xf16>
func.func @int4_group_defaults(%x: tensor<2x256xi16>, %s: tensor<8x2xf16>) -> tensor<8x256xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4"} : (tensor<2x256xi16>, tensor<8x2xf16>) -> tensor<8x256xf16>
  return %y : tensor<8x256xf16>
}

// Groups along axis 0 count unpacked rows: X 4x16 -> Y 16x16, groups of 8 -> Scale 2x16.
// CHECK-LABEL: func.func @int4_group_axis0_int_zero_point(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {group_size = 8 : i64, has_zeropoint = true, quant_axis = 0 : i64, quant_data_type = "int4"} : (tensor<4x16xi16>, tensor<2x16xf32>, tensor<2x16xi8>) -> tensor<16x16xf32>
func.func @int4_group_axis0_int_zero_point(%x: tensor<4x16xi16>, %s: tensor<2x16xf32>, %z: tensor<2x16xi8>) -> tensor<16x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int4", quant_axis = 0 : i64, group_size = 8 : i64, has_zeropoint = true} : (tensor<4x16xi16>, tensor<2x16xf32>, tensor<2x16xi8>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// CHECK-LABEL: func.func @int4_group_float_zero_point(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {float_zeropoint = true, group_size = 4 : i64, has_zeropoint = true, quant_data_type = "int4"} : (tensor<2x16xi16>, tensor<8x4xf16>, tensor<8x4xf16>) -> tensor<8x16xf16>
func.func @int4_group_float_zero_point(%x: tensor<2x16xi16>, %s: tensor<8x4xf16>, %z: tensor<8x4xf16>) -> tensor<8x16xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int4", group_size = 4 : i64, has_zeropoint = true, float_zeropoint = true} : (tensor<2x16xi16>, tensor<8x4xf16>, tensor<8x4xf16>) -> tensor<8x16xf16>
  return %y : tensor<8x16xf16>
}

// CHECK-LABEL: func.func @int4_per_tensor(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {group_size = 0 : i64, quant_data_type = "int4"} : (tensor<2x16xi16>, tensor<1xf32>) -> tensor<8x16xf32>
func.func @int4_per_tensor(%x: tensor<2x16xi16>, %s: tensor<1xf32>) -> tensor<8x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<2x16xi16>, tensor<1xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// Per channel: one scale per unpacked row (8 = 4 * 2).
// CHECK-LABEL: func.func @int4_per_channel(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {group_size = 0 : i64, has_zeropoint = true, quant_data_type = "int4"} : (tensor<2x16xi16>, tensor<8x1xf32>, tensor<8x1xi8>) -> tensor<8x16xf32>
func.func @int4_per_channel(%x: tensor<2x16xi16>, %s: tensor<8x1xf32>, %z: tensor<8x1xi8>) -> tensor<8x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int4", group_size = 0 : i64, has_zeropoint = true} : (tensor<2x16xi16>, tensor<8x1xf32>, tensor<8x1xi8>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// A rank-1 int4 X: 4 packed values -> 16 outputs, per channel along them.
// CHECK-LABEL: func.func @int4_rank1(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {group_size = 0 : i64, quant_data_type = "int4"} : (tensor<4xi16>, tensor<16xf32>) -> tensor<16xf32>
func.func @int4_rank1(%x: tensor<4xi16>, %s: tensor<16xf32>) -> tensor<16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<4xi16>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// ---- Dynamic dims.

// A dynamic packed dim 0 and a dynamic Scale dim 0.
// CHECK-LABEL: func.func @int4_dynamic_rows(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {quant_data_type = "int4"} : (tensor<?x256xi16>, tensor<?x2xf16>) -> tensor<?x256xf16>
func.func @int4_dynamic_rows(%x: tensor<?x256xi16>, %s: tensor<?x2xf16>) -> tensor<?x256xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4"} : (tensor<?x256xi16>, tensor<?x2xf16>) -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// A dynamic grouped dim (divisibility is then a run-time matter).
// CHECK-LABEL: func.func @int8_dynamic_grouped_dim(
// CHECK: "dq.pmx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {group_size = 32 : i64, has_zeropoint = true, quant_data_type = "int8"} : (tensor<4x?xi8>, tensor<4x?xf32>, tensor<4x?xi8>) -> tensor<4x?xf32>
func.func @int8_dynamic_grouped_dim(%x: tensor<4x?xi8>, %s: tensor<4x?xf32>, %z: tensor<4x?xi8>) -> tensor<4x?xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 32 : i64, has_zeropoint = true} : (tensor<4x?xi8>, tensor<4x?xf32>, tensor<4x?xi8>) -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// Dynamic rows, per channel.
// CHECK-LABEL: func.func @int8_dynamic_per_channel(
// CHECK: "dq.pmx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {group_size = 0 : i64, quant_data_type = "int8"} : (tensor<?x16xi8>, tensor<?x1xf32>) -> tensor<?x16xf32>
func.func @int8_dynamic_per_channel(%x: tensor<?x16xi8>, %s: tensor<?x1xf32>) -> tensor<?x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<?x16xi8>, tensor<?x1xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
