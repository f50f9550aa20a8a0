// RUN: dequant-opt %s --dq-normalize --split-input-file | FileCheck %s

// dq-normalize rewrites each spec op into the canonical dq.dequantize: the granularity becomes
// scale_map/zero_point_map from the output index (per-tensor `-> ()` for a scalar, `-> (0)` for
// a one-element 1-D tensor; per-axis `-> (d_axis)`; blocked `d_axis floordiv block_size`), and the
// attributes zero_point_mode = "subtract", unpack = "none" are spelled out.

// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @per_tensor_scalar
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xi8>, %[[S:[^:]+]]: tensor<f32>, %[[Z:[^:]+]]: tensor<i8>)
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK: %[[Y:.*]] = "dq.dequantize"(%[[X]], %[[S]], %[[Z]]) {scale_map = #[[SCALAR]], unpack = "none", zero_point_map = #[[SCALAR]], zero_point_mode = "subtract"} : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @per_tensor_scalar(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A one-element 1-D scale with a scalar zero point: each keeps its own map.
// CHECK-DAG: #[[ZERO:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @per_tensor_mixed
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[ZERO]], unpack = "none", zero_point_map = #[[SCALAR]], zero_point_mode = "subtract"} : (tensor<4x8xui8>, tensor<1xf32>, tensor<ui8>) -> tensor<4x8xf32>
func.func @per_tensor_mixed(%x: tensor<4x8xui8>, %s: tensor<1xf32>, %z: tensor<ui8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xui8>, tensor<1xf32>, tensor<ui8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// And the other way round.
// CHECK-DAG: #[[ZERO:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @per_tensor_mixed_reversed
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[SCALAR]], unpack = "none", zero_point_map = #[[ZERO]], zero_point_mode = "subtract"} : (tensor<4x8xi8>, tensor<f32>, tensor<1xi8>) -> tensor<4x8xf32>
func.func @per_tensor_mixed_reversed(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<1xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<1xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Per-axis, default axis 1.
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @per_axis
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[AXIS]], unpack = "none", zero_point_map = #[[AXIS]], zero_point_mode = "subtract"} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
func.func @per_axis(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Per-axis with a negative axis: -3 of a rank-3 x is dim 0.
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @per_axis_negative
// CHECK: "dq.dequantize"(%{{[^,]*}}, %{{[^,]*}}) {scale_map = #[[AXIS]], unpack = "none", zero_point_map = #[[AXIS]], zero_point_mode = "subtract"} : (tensor<5x8x2xi8>, tensor<5xf16>) -> tensor<5x8x2xf16>
func.func @per_axis_negative(%x: tensor<5x8x2xi8>, %s: tensor<5xf16>) -> tensor<5x8x2xf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = -3 : i64} : (tensor<5x8x2xi8>, tensor<5xf16>) -> tensor<5x8x2xf16>
  return %y : tensor<5x8x2xf16>
}

// -----

// Blocked along the middle axis of a rank-3 x.
// CHECK-DAG: #[[BLOCK:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1 floordiv 8, d2)>
// CHECK-LABEL: func.func @blocked
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[BLOCK]], unpack = "none", zero_point_map = #[[BLOCK]], zero_point_mode = "subtract"} : (tensor<2x32x3xi4>, tensor<2x4x3xf32>, tensor<2x4x3xi4>) -> tensor<2x32x3xf32>
func.func @blocked(%x: tensor<2x32x3xi4>, %s: tensor<2x4x3xf32>, %z: tensor<2x4x3xi4>) -> tensor<2x32x3xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = -2 : i64, block_size = 8 : i64} : (tensor<2x32x3xi4>, tensor<2x4x3xf32>, tensor<2x4x3xi4>) -> tensor<2x32x3xf32>
  return %y : tensor<2x32x3xf32>
}

// -----

// MX (float4 data, float8e8m0 scales, bf16 out) and a dynamic dim; the result type is kept.
// CHECK-DAG: #[[BLOCK:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
// CHECK-LABEL: func.func @mx_dynamic
// CHECK: "dq.dequantize"(%{{[^,]*}}, %{{[^,]*}}) {scale_map = #[[BLOCK]], unpack = "none", zero_point_map = #[[BLOCK]], zero_point_mode = "subtract"} : (tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>) -> tensor<?x64xbf16>
func.func @mx_dynamic(%x: tensor<?x64xf4E2M1FN>, %s: tensor<?x2xf8E8M0FNU>) -> tensor<?x64xbf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {block_size = 32 : i64, output_dtype = bf16} : (tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----

// An op already in canonical form is left as it is.
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @canonical_unchanged
// CHECK: "dq.dequantize"(%{{[^,]*}}, %{{[^,]*}}) {scale_map = #[[AXIS]], zero_point_map = #[[AXIS]]} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @canonical_unchanged(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
