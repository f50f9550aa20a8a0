// RUN: dequant-opt %s | dequant-opt | FileCheck %s
// RUN: dequant-opt %s --mlir-print-op-generic | dequant-opt | FileCheck %s

// Parse/print round trips of dq.onnx_dequantize_linear (ONNX DequantizeLinear, opset 24) and of
// the canonical dq.dequantize. IRDL ops print in the generic form; attributes the input leaves
// out (spec defaults) stay out.

// The affine maps of the dq.dequantize cases at the end print at the top.
// CHECK-DAG: #[[PER_AXIS:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[BLOCKED:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ZERO:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-DAG: #[[ROWS:map[0-9]*]] = affine_map<(d0, d1) -> (d0 floordiv 4, d1)>

// ---- Per-tensor: a scalar or a one-element 1-D scale, zero points may mix the two (docs/semantics.md#onnx-granularity).

// CHECK-LABEL: func.func @per_tensor_scalar
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xi8>, %[[S:.*]]: tensor<f32>, %[[Z:.*]]: tensor<i8>) -> tensor<4x8xf32>
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[X]], %[[S]], %[[Z]]) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4x8xf32>
func.func @per_tensor_scalar(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @per_tensor_one_element
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xui8>, tensor<1xf32>, tensor<1xui8>) -> tensor<4x8xf32>
func.func @per_tensor_one_element(%x: tensor<4x8xui8>, %s: tensor<1xf32>, %z: tensor<1xui8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xui8>, tensor<1xf32>, tensor<1xui8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @per_tensor_scalar_scale_1d_zero_point
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xi8>, tensor<f32>, tensor<1xi8>) -> tensor<4x8xf32>
func.func @per_tensor_scalar_scale_1d_zero_point(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<1xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<1xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @per_tensor_1d_scale_scalar_zero_point
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xi8>, tensor<1xf32>, tensor<i8>) -> tensor<4x8xf32>
func.func @per_tensor_1d_scale_scalar_zero_point(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<i8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<1xf32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// Without a zero point; `axis` is not used (nor range-checked) per tensor.
// CHECK-LABEL: func.func @per_tensor_no_zero_point
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 7 : i64} : (tensor<2x3x4xi8>, tensor<f32>) -> tensor<2x3x4xf32>
func.func @per_tensor_no_zero_point(%x: tensor<2x3x4xi8>, %s: tensor<f32>) -> tensor<2x3x4xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 7 : i64} : (tensor<2x3x4xi8>, tensor<f32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// A rank-0 input.
// CHECK-LABEL: func.func @per_tensor_rank0
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<f32>
func.func @per_tensor_rank0(%x: tensor<i8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<f32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<f32>
  return %y : tensor<f32>
}

// ---- Per-axis: a 1-D scale of dim(axis) elements.

// The default axis is 1.
// CHECK-LABEL: func.func @per_axis_default_axis
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
func.func @per_axis_default_axis(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @per_axis_axis0
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<4x8x2xui8>, tensor<4xf32>, tensor<4xui8>) -> tensor<4x8x2xf32>
func.func @per_axis_axis0(%x: tensor<4x8x2xui8>, %s: tensor<4xf32>, %z: tensor<4xui8>) -> tensor<4x8x2xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64} : (tensor<4x8x2xui8>, tensor<4xf32>, tensor<4xui8>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// CHECK-LABEL: func.func @per_axis_axis2
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 2 : i64} : (tensor<4x8x2xi8>, tensor<2xf32>) -> tensor<4x8x2xf32>
func.func @per_axis_axis2(%x: tensor<4x8x2xi8>, %s: tensor<2xf32>) -> tensor<4x8x2xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 2 : i64} : (tensor<4x8x2xi8>, tensor<2xf32>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// A negative axis counts from the back: -1 is dim 1 of a rank-2 x, -3 is dim 0 of a rank-3 x.
// CHECK-LABEL: func.func @per_axis_negative_axis
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = -1 : i64} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = -3 : i64} : (tensor<5x8x2xi8>, tensor<5xf32>) -> tensor<5x8x2xf32>
func.func @per_axis_negative_axis(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>, %x3: tensor<5x8x2xi8>, %s3: tensor<5xf32>) -> (tensor<4x8xf32>, tensor<5x8x2xf32>) {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = -1 : i64} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  %y3 = "dq.onnx_dequantize_linear"(%x3, %s3) {axis = -3 : i64} : (tensor<5x8x2xi8>, tensor<5xf32>) -> tensor<5x8x2xf32>
  return %y, %y3 : tensor<4x8xf32>, tensor<5x8x2xf32>
}

// A rank-1 x with a 1-D scale of dim(axis) elements is per-axis (as in the ONNX reference).
// CHECK-LABEL: func.func @per_axis_rank1
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 0 : i64} : (tensor<8xi8>, tensor<8xf32>) -> tensor<8xf32>
func.func @per_axis_rank1(%x: tensor<8xi8>, %s: tensor<8xf32>) -> tensor<8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 0 : i64} : (tensor<8xi8>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// ---- Blocked: a scale of x's rank, block_size > 0.

// CHECK-LABEL: func.func @blocked_last_axis
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 1 : i64, block_size = 32 : i64} : (tensor<4x64xi4>, tensor<4x2xf32>, tensor<4x2xi4>) -> tensor<4x64xf32>
func.func @blocked_last_axis(%x: tensor<4x64xi4>, %s: tensor<4x2xf32>, %z: tensor<4x2xi4>) -> tensor<4x64xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 32 : i64} : (tensor<4x64xi4>, tensor<4x2xf32>, tensor<4x2xi4>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// CHECK-LABEL: func.func @blocked_axis0
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 0 : i64, block_size = 16 : i64} : (tensor<64x4xui4>, tensor<4x4xf16>) -> tensor<64x4xf16>
func.func @blocked_axis0(%x: tensor<64x4xui4>, %s: tensor<4x4xf16>) -> tensor<64x4xf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 0 : i64, block_size = 16 : i64} : (tensor<64x4xui4>, tensor<4x4xf16>) -> tensor<64x4xf16>
  return %y : tensor<64x4xf16>
}

// Rank 3, blocked along the middle axis given as a negative axis.
// CHECK-LABEL: func.func @blocked_rank3_negative_axis
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = -2 : i64, block_size = 8 : i64} : (tensor<2x32x3xi8>, tensor<2x4x3xf32>, tensor<2x4x3xi8>) -> tensor<2x32x3xf32>
func.func @blocked_rank3_negative_axis(%x: tensor<2x32x3xi8>, %s: tensor<2x4x3xf32>, %z: tensor<2x4x3xi8>) -> tensor<2x32x3xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = -2 : i64, block_size = 8 : i64} : (tensor<2x32x3xi8>, tensor<2x4x3xf32>, tensor<2x4x3xi8>) -> tensor<2x32x3xf32>
  return %y : tensor<2x32x3xf32>
}

// Rank 1, blocked.
// CHECK-LABEL: func.func @blocked_rank1
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 0 : i64, block_size = 32 : i64} : (tensor<64xi8>, tensor<2xf32>) -> tensor<64xf32>
func.func @blocked_rank1(%x: tensor<64xi8>, %s: tensor<2xf32>) -> tensor<64xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 0 : i64, block_size = 32 : i64} : (tensor<64xi8>, tensor<2xf32>) -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// Ragged last block: Di = 70, Si = 3, block_size in [ceil(70/3), ceil(70/2)-1] = [24, 34].
// CHECK-LABEL: func.func @blocked_ragged
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 1 : i64, block_size = 24 : i64} : (tensor<2x70xi8>, tensor<2x3xf32>) -> tensor<2x70xf32>
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 1 : i64, block_size = 34 : i64} : (tensor<2x70xi8>, tensor<2x3xf32>) -> tensor<2x70xf32>
func.func @blocked_ragged(%x: tensor<2x70xi8>, %s: tensor<2x3xf32>) -> (tensor<2x70xf32>, tensor<2x70xf32>) {
  %lo = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 24 : i64} : (tensor<2x70xi8>, tensor<2x3xf32>) -> tensor<2x70xf32>
  %hi = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 34 : i64} : (tensor<2x70xi8>, tensor<2x3xf32>) -> tensor<2x70xf32>
  return %lo, %hi : tensor<2x70xf32>, tensor<2x70xf32>
}

// One block covering the whole axis (Si = 1: any block_size >= Di).
// CHECK-LABEL: func.func @blocked_single_block
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 1 : i64, block_size = 128 : i64} : (tensor<2x70xi8>, tensor<2x1xf32>) -> tensor<2x70xf32>
func.func @blocked_single_block(%x: tensor<2x70xi8>, %s: tensor<2x1xf32>) -> tensor<2x70xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 128 : i64} : (tensor<2x70xi8>, tensor<2x1xf32>) -> tensor<2x70xf32>
  return %y : tensor<2x70xf32>
}

// ---- Dynamic dims.

// CHECK-LABEL: func.func @dynamic_per_tensor
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?xi8>, tensor<f32>, tensor<i8>) -> tensor<?x?xf32>
func.func @dynamic_per_tensor(%x: tensor<?x?xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<?x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<?x?xi8>, tensor<f32>, tensor<i8>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// A 1-D scale of dynamic length is per-axis.
// CHECK-LABEL: func.func @dynamic_per_axis
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?xi8>, tensor<?xf32>, tensor<?xi8>) -> tensor<?x?xf32>
func.func @dynamic_per_axis(%x: tensor<?x?xi8>, %s: tensor<?xf32>, %z: tensor<?xi8>) -> tensor<?x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<?x?xi8>, tensor<?xf32>, tensor<?xi8>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @dynamic_blocked
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 1 : i64, block_size = 32 : i64} : (tensor<?x?xi8>, tensor<?x?xf32>) -> tensor<?x?xf32>
func.func @dynamic_blocked(%x: tensor<?x?xi8>, %s: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 32 : i64} : (tensor<?x?xi8>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// Static and dynamic dims agree with each other (x static, y dynamic).
// CHECK-LABEL: func.func @dynamic_result
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<?x8xf32>
func.func @dynamic_result(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<?x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// ---- Every storage type T1 of opset 24, and si8 (a synonym of i8).

// CHECK-LABEL: func.func @storage_types
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xi8>, tensor<f32>, tensor<i8>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xui8>, tensor<f32>, tensor<ui8>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xi16>, tensor<f32>, tensor<i16>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xui16>, tensor<f32>, tensor<ui16>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xi32>, tensor<f32>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xi4>, tensor<f32>, tensor<i4>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xui4>, tensor<f32>, tensor<ui4>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xf8E4M3FN>, tensor<f32>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xf8E4M3FNUZ>, tensor<f32>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xf8E5M2>, tensor<f32>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xf8E5M2FNUZ>, tensor<f32>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xf4E2M1FN>, tensor<f32>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xsi8>, tensor<f32>, tensor<si8>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xsi8>, tensor<f32>, tensor<i8>) -> tensor<16xf32>
func.func @storage_types(%s: tensor<f32>,
    %i8: tensor<16xi8>, %zi8: tensor<i8>, %u8: tensor<16xui8>, %zu8: tensor<ui8>,
    %i16: tensor<16xi16>, %zi16: tensor<i16>, %u16: tensor<16xui16>, %zu16: tensor<ui16>,
    %i32: tensor<16xi32>, %i4: tensor<16xi4>, %zi4: tensor<i4>, %u4: tensor<16xui4>, %zu4: tensor<ui4>,
    %e4m3fn: tensor<16xf8E4M3FN>, %e4m3fnuz: tensor<16xf8E4M3FNUZ>, %e5m2: tensor<16xf8E5M2>,
    %e5m2fnuz: tensor<16xf8E5M2FNUZ>, %e2m1: tensor<16xf4E2M1FN>, %si8: tensor<16xsi8>, %zsi8: tensor<si8>) {
  %0 = "dq.onnx_dequantize_linear"(%i8, %s, %zi8) : (tensor<16xi8>, tensor<f32>, tensor<i8>) -> tensor<16xf32>
  %1 = "dq.onnx_dequantize_linear"(%u8, %s, %zu8) : (tensor<16xui8>, tensor<f32>, tensor<ui8>) -> tensor<16xf32>
  %2 = "dq.onnx_dequantize_linear"(%i16, %s, %zi16) : (tensor<16xi16>, tensor<f32>, tensor<i16>) -> tensor<16xf32>
  %3 = "dq.onnx_dequantize_linear"(%u16, %s, %zu16) : (tensor<16xui16>, tensor<f32>, tensor<ui16>) -> tensor<16xf32>
  %4 = "dq.onnx_dequantize_linear"(%i32, %s) : (tensor<16xi32>, tensor<f32>) -> tensor<16xf32>
  %5 = "dq.onnx_dequantize_linear"(%i4, %s, %zi4) : (tensor<16xi4>, tensor<f32>, tensor<i4>) -> tensor<16xf32>
  %6 = "dq.onnx_dequantize_linear"(%u4, %s, %zu4) : (tensor<16xui4>, tensor<f32>, tensor<ui4>) -> tensor<16xf32>
  %7 = "dq.onnx_dequantize_linear"(%e4m3fn, %s) : (tensor<16xf8E4M3FN>, tensor<f32>) -> tensor<16xf32>
  %8 = "dq.onnx_dequantize_linear"(%e4m3fnuz, %s) : (tensor<16xf8E4M3FNUZ>, tensor<f32>) -> tensor<16xf32>
  %9 = "dq.onnx_dequantize_linear"(%e5m2, %s) : (tensor<16xf8E5M2>, tensor<f32>) -> tensor<16xf32>
  %10 = "dq.onnx_dequantize_linear"(%e5m2fnuz, %s) : (tensor<16xf8E5M2FNUZ>, tensor<f32>) -> tensor<16xf32>
  %11 = "dq.onnx_dequantize_linear"(%e2m1, %s) : (tensor<16xf4E2M1FN>, tensor<f32>) -> tensor<16xf32>
  %12 = "dq.onnx_dequantize_linear"(%si8, %s, %zsi8) : (tensor<16xsi8>, tensor<f32>, tensor<si8>) -> tensor<16xf32>
  %13 = "dq.onnx_dequantize_linear"(%si8, %s, %zi8) : (tensor<16xsi8>, tensor<f32>, tensor<i8>) -> tensor<16xf32>
  return
}

// Zero points that are constants and zero: allowed for int32 and float8/float4 storage.
// CHECK-LABEL: func.func @zero_constant_zero_points
// CHECK-DAG: %[[ZI32:.*]] = arith.constant dense<0> : tensor<i32>
// CHECK-DAG: %[[ZF8:.*]] = arith.constant dense<0.000000e+00> : tensor<f8E4M3FN>
// CHECK-DAG: %[[ZF4:.*]] = arith.constant dense<0.000000e+00> : tensor<3xf4E2M1FN>
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %[[ZI32]]) : (tensor<16xi32>, tensor<f32>, tensor<i32>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %[[ZF8]]) : (tensor<16xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %[[ZF4]]) {axis = 0 : i64} : (tensor<3x16xf4E2M1FN>, tensor<3xf32>, tensor<3xf4E2M1FN>) -> tensor<3x16xf32>
func.func @zero_constant_zero_points(%s: tensor<f32>, %i32: tensor<16xi32>, %e4m3fn: tensor<16xf8E4M3FN>, %e2m1: tensor<3x16xf4E2M1FN>, %s3: tensor<3xf32>) {
  %zi32 = arith.constant dense<0> : tensor<i32>
  %zf8 = arith.constant dense<0.0> : tensor<f8E4M3FN>
  %zf4 = arith.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf4E2M1FN>
  %0 = "dq.onnx_dequantize_linear"(%i32, %s, %zi32) : (tensor<16xi32>, tensor<f32>, tensor<i32>) -> tensor<16xf32>
  %1 = "dq.onnx_dequantize_linear"(%e4m3fn, %s, %zf8) : (tensor<16xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<16xf32>
  %2 = "dq.onnx_dequantize_linear"(%e2m1, %s3, %zf4) {axis = 0 : i64} : (tensor<3x16xf4E2M1FN>, tensor<3xf32>, tensor<3xf4E2M1FN>) -> tensor<3x16xf32>
  return
}

// ---- Scale types T2 and output types T3 (output_dtype, else the scale's type).

// CHECK-LABEL: func.func @scale_types
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xi8>, tensor<f16>) -> tensor<16xf16>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) : (tensor<16xi8>, tensor<bf16>) -> tensor<16xbf16>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) {output_dtype = f32} : (tensor<16xi8>, tensor<f8E8M0FNU>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) {axis = 0 : i64, block_size = 32 : i64, output_dtype = bf16} : (tensor<64xf4E2M1FN>, tensor<2xf8E8M0FNU>) -> tensor<64xbf16>
func.func @scale_types(%x: tensor<16xi8>, %h: tensor<f16>, %b: tensor<bf16>, %e: tensor<f8E8M0FNU>, %mx: tensor<64xf4E2M1FN>, %mxs: tensor<2xf8E8M0FNU>) {
  %0 = "dq.onnx_dequantize_linear"(%x, %h) : (tensor<16xi8>, tensor<f16>) -> tensor<16xf16>
  %1 = "dq.onnx_dequantize_linear"(%x, %b) : (tensor<16xi8>, tensor<bf16>) -> tensor<16xbf16>
  %2 = "dq.onnx_dequantize_linear"(%x, %e) {output_dtype = f32} : (tensor<16xi8>, tensor<f8E8M0FNU>) -> tensor<16xf32>
  %3 = "dq.onnx_dequantize_linear"(%mx, %mxs) {axis = 0 : i64, block_size = 32 : i64, output_dtype = bf16} : (tensor<64xf4E2M1FN>, tensor<2xf8E8M0FNU>) -> tensor<64xbf16>
  return
}

// CHECK-LABEL: func.func @output_dtypes
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) {output_dtype = f32} : (tensor<16xi8>, tensor<f16>) -> tensor<16xf32>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) {output_dtype = f16} : (tensor<16xi8>, tensor<f32>) -> tensor<16xf16>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) {output_dtype = bf16} : (tensor<16xi8>, tensor<f32>) -> tensor<16xbf16>
// CHECK: "dq.onnx_dequantize_linear"({{.*}}) {output_dtype = f32} : (tensor<16xi8>, tensor<f32>) -> tensor<16xf32>
func.func @output_dtypes(%x: tensor<16xi8>, %h: tensor<f16>, %f: tensor<f32>) {
  %0 = "dq.onnx_dequantize_linear"(%x, %h) {output_dtype = f32} : (tensor<16xi8>, tensor<f16>) -> tensor<16xf32>
  %1 = "dq.onnx_dequantize_linear"(%x, %f) {output_dtype = f16} : (tensor<16xi8>, tensor<f32>) -> tensor<16xf16>
  %2 = "dq.onnx_dequantize_linear"(%x, %f) {output_dtype = bf16} : (tensor<16xi8>, tensor<f32>) -> tensor<16xbf16>
  %3 = "dq.onnx_dequantize_linear"(%x, %f) {output_dtype = f32} : (tensor<16xi8>, tensor<f32>) -> tensor<16xf32>
  return
}

// ---- The canonical op, dq.dequantize.

// CHECK-LABEL: func.func @canonical_per_axis
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[PER_AXIS]], zero_point_map = #[[PER_AXIS]]} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
func.func @canonical_per_axis(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @canonical_blocked
// CHECK: "dq.dequantize"(%{{[^,]*}}, %{{[^,]*}}) {scale_map = #[[BLOCKED]], zero_point_map = #[[BLOCKED]]} : (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> tensor<4x64xbf16>
func.func @canonical_blocked(%x: tensor<4x64xf8E4M3FN>, %s: tensor<4x2xf8E8M0FNU>) -> tensor<4x64xbf16> {
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>, zero_point_map = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>} : (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> tensor<4x64xbf16>
  return %y : tensor<4x64xbf16>
}

// A float zero point added after scaling, with different maps for scale and zero point.
// CHECK-LABEL: func.func @canonical_add_mode
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[SCALAR]], zero_point_map = #[[ZERO]], zero_point_mode = "add"} : (tensor<?x8xui8>, tensor<f64>, tensor<1xf64>) -> tensor<?x8xf64>
func.func @canonical_add_mode(%x: tensor<?x8xui8>, %s: tensor<f64>, %z: tensor<1xf64>) -> tensor<?x8xf64> {
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> (0)>, zero_point_mode = "add"} : (tensor<?x8xui8>, tensor<f64>, tensor<1xf64>) -> tensor<?x8xf64>
  return %y : tensor<?x8xf64>
}

// Four nibbles per i16 along dim 0; an integer zero point of i8.
// CHECK-LABEL: func.func @canonical_unpack_int4x4
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[ROWS]], unpack = "int4x4", zero_point_map = #[[ROWS]], zero_point_mode = "subtract"} : (tensor<4x8xi16>, tensor<4x8xf16>, tensor<4x8xi8>) -> tensor<16x8xf16>
func.func @canonical_unpack_int4x4(%x: tensor<4x8xi16>, %s: tensor<4x8xf16>, %z: tensor<4x8xi8>) -> tensor<16x8xf16> {
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> (d0 floordiv 4, d1)>, zero_point_map = affine_map<(d0, d1) -> (d0 floordiv 4, d1)>, zero_point_mode = "subtract", unpack = "int4x4"} : (tensor<4x8xi16>, tensor<4x8xf16>, tensor<4x8xi8>) -> tensor<16x8xf16>
  return %y : tensor<16x8xf16>
}
