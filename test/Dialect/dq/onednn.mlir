// RUN: dequant-opt %s | dequant-opt | FileCheck %s
// RUN: dequant-opt %s --mlir-print-op-generic | dequant-opt | FileCheck %s

// Parse/print round trips of dq.onednn_dynamic_dequantize (oneDNN Graph DynamicDequantize-1):
// input s8/u8, scales f32 1-D, optional zps s8/u8/s32 1-D, output f32. `qtype` defaults to
// "per_tensor" and `axis` to 1; attributes the input leaves out stay out.

// ---- per_tensor: one-element scales (and zps).

// Both attributes omitted (defaults), no zps.
// CHECK-LABEL: func.func @per_tensor_defaults(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xi8>, %[[S:.*]]: tensor<1xf32>) -> tensor<4x8xf32>
// CHECK: %[[Y:.*]] = "dq.onednn_dynamic_dequantize"(%[[X]], %[[S]]) : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4x8xf32>
func.func @per_tensor_defaults(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// qtype given explicitly, s8 zps.
// CHECK-LABEL: func.func @per_tensor_explicit(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xi8>, %[[S:.*]]: tensor<1xf32>, %[[Z:.*]]: tensor<1xi8>) -> tensor<4x8xf32>
// CHECK: "dq.onednn_dynamic_dequantize"(%[[X]], %[[S]], %[[Z]]) {qtype = "per_tensor"} : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
func.func @per_tensor_explicit(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_tensor"} : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// u8 input with u8 zps.
// CHECK-LABEL: func.func @per_tensor_u8_u8_zps(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xui8>, tensor<1xf32>, tensor<1xui8>) -> tensor<4x8xf32>
func.func @per_tensor_u8_u8_zps(%x: tensor<4x8xui8>, %s: tensor<1xf32>, %z: tensor<1xui8>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<4x8xui8>, tensor<1xf32>, tensor<1xui8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// s32 zps (T3) with an s8 input: zps' type need not be input's.
// CHECK-LABEL: func.func @per_tensor_s32_zps(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
func.func @per_tensor_s32_zps(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<1xi32>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// u8 input with s8 zps.
// CHECK-LABEL: func.func @per_tensor_u8_input_s8_zps(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xui8>, tensor<1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
func.func @per_tensor_u8_input_s8_zps(%x: tensor<4x8xui8>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<4x8xui8>, tensor<1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// s8 input with u8 zps.
// CHECK-LABEL: func.func @per_tensor_s8_input_u8_zps(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xui8>) -> tensor<4x8xf32>
func.func @per_tensor_s8_input_u8_zps(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<1xui8>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xui8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// `si8` is accepted as the s8 spelling and printed as written.
// CHECK-LABEL: func.func @per_tensor_si8(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}) : (tensor<4x8xsi8>, tensor<1xf32>) -> tensor<4x8xf32>
func.func @per_tensor_si8(%x: tensor<4x8xsi8>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xsi8>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// `axis` is valid only for per_channel: per_tensor neither uses nor range-checks it.
// CHECK-LABEL: func.func @per_tensor_axis_ignored(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}) {axis = 5 : i64, qtype = "per_tensor"} : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf32>
func.func @per_tensor_axis_ignored(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_tensor", axis = 5 : i64} : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// A rank-0 input still takes 1-D one-element scales and zps.
// CHECK-LABEL: func.func @per_tensor_rank0(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<i8>, tensor<1xf32>, tensor<1xi8>) -> tensor<f32>
func.func @per_tensor_rank0(%x: tensor<i8>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> tensor<f32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<i8>, tensor<1xf32>, tensor<1xi8>) -> tensor<f32>
  return %y : tensor<f32>
}

// Dynamic dims: the input's, and a dynamic scales/zps length (one element at run time).
// CHECK-LABEL: func.func @per_tensor_dynamic(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?xui8>, tensor<?xf32>, tensor<?xui8>) -> tensor<?x?xf32>
func.func @per_tensor_dynamic(%x: tensor<?x?xui8>, %s: tensor<?xf32>, %z: tensor<?xui8>) -> tensor<?x?xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<?x?xui8>, tensor<?xf32>, tensor<?xui8>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// ---- per_channel: dim(axis) scales (and zps).

// Default axis 1.
// CHECK-LABEL: func.func @per_channel_default_axis(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xi8>, %[[S:.*]]: tensor<8xf32>, %[[Z:.*]]: tensor<8xi8>) -> tensor<4x8xf32>
// CHECK: "dq.onednn_dynamic_dequantize"(%[[X]], %[[S]], %[[Z]]) {qtype = "per_channel"} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
func.func @per_channel_default_axis(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel"} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @per_channel_axis0_no_zps(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{[^,]*}}, %{{[^,]*}}) {axis = 0 : i64, qtype = "per_channel"} : (tensor<4x8x2xui8>, tensor<4xf32>) -> tensor<4x8x2xf32>
func.func @per_channel_axis0_no_zps(%x: tensor<4x8x2xui8>, %s: tensor<4xf32>) -> tensor<4x8x2xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel", axis = 0 : i64} : (tensor<4x8x2xui8>, tensor<4xf32>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// The last axis, r - 1, with s32 zps.
// CHECK-LABEL: func.func @per_channel_axis_last(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 2 : i64, qtype = "per_channel"} : (tensor<4x8x2xi8>, tensor<2xf32>, tensor<2xi32>) -> tensor<4x8x2xf32>
func.func @per_channel_axis_last(%x: tensor<4x8x2xi8>, %s: tensor<2xf32>, %z: tensor<2xi32>) -> tensor<4x8x2xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel", axis = 2 : i64} : (tensor<4x8x2xi8>, tensor<2xf32>, tensor<2xi32>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// Negative axes count from the back: -1 is the last dim, -r the first.
// CHECK-LABEL: func.func @per_channel_axis_minus1(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = -1 : i64, qtype = "per_channel"} : (tensor<4x8x2xi8>, tensor<2xf32>, tensor<2xui8>) -> tensor<4x8x2xf32>
func.func @per_channel_axis_minus1(%x: tensor<4x8x2xi8>, %s: tensor<2xf32>, %z: tensor<2xui8>) -> tensor<4x8x2xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel", axis = -1 : i64} : (tensor<4x8x2xi8>, tensor<2xf32>, tensor<2xui8>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// CHECK-LABEL: func.func @per_channel_axis_minus_r(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = -3 : i64, qtype = "per_channel"} : (tensor<4x8x2xui8>, tensor<4xf32>, tensor<4xui8>) -> tensor<4x8x2xf32>
func.func @per_channel_axis_minus_r(%x: tensor<4x8x2xui8>, %s: tensor<4xf32>, %z: tensor<4xui8>) -> tensor<4x8x2xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel", axis = -3 : i64} : (tensor<4x8x2xui8>, tensor<4xf32>, tensor<4xui8>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// A rank-1 input, per channel along its only axis.
// CHECK-LABEL: func.func @per_channel_rank1(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}) {axis = 0 : i64, qtype = "per_channel"} : (tensor<16xi8>, tensor<16xf32>) -> tensor<16xf32>
func.func @per_channel_rank1(%x: tensor<16xi8>, %s: tensor<16xf32>) -> tensor<16xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel", axis = 0 : i64} : (tensor<16xi8>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// A dynamic channel dim with static scales/zps lengths, and the reverse.
// CHECK-LABEL: func.func @per_channel_dynamic_axis_dim(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {qtype = "per_channel"} : (tensor<?x?xi8>, tensor<8xf32>, tensor<8xi32>) -> tensor<?x?xf32>
func.func @per_channel_dynamic_axis_dim(%x: tensor<?x?xi8>, %s: tensor<8xf32>, %z: tensor<8xi32>) -> tensor<?x?xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel"} : (tensor<?x?xi8>, tensor<8xf32>, tensor<8xi32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @per_channel_dynamic_lengths(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = -2 : i64, qtype = "per_channel"} : (tensor<4x?xui8>, tensor<?xf32>, tensor<?xi8>) -> tensor<4x?xf32>
func.func @per_channel_dynamic_lengths(%x: tensor<4x?xui8>, %s: tensor<?xf32>, %z: tensor<?xi8>) -> tensor<4x?xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel", axis = -2 : i64} : (tensor<4x?xui8>, tensor<?xf32>, tensor<?xi8>) -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// A dynamic output dim where the input's is static (and the reverse) is compatible.
// CHECK-LABEL: func.func @dynamic_output_dim(
// CHECK: "dq.onednn_dynamic_dequantize"(%{{.*}}, %{{.*}}) : (tensor<4x?xi8>, tensor<1xf32>) -> tensor<?x8xf32>
func.func @dynamic_output_dim(%x: tensor<4x?xi8>, %s: tensor<1xf32>) -> tensor<?x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x?xi8>, tensor<1xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
