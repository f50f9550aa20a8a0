// Errors print as file:line:col: error: message (like mlir-opt) and the exit status is non-zero.
// With --split-input-file every chunk is processed: good chunks are still printed.
// RUN: not dequant-opt %s --split-input-file 2>&1 | FileCheck %s
// RUN: not dequant-opt %s --split-input-file --dq-to-linalg 2>&1 | FileCheck %s --check-prefix=LOWER

// CHECK: {{.*}}errors.mlir:[[@LINE+4]]:8: error: 'dq.onnx_dequantize_linear' op per-axis x_scale must have dim(axis) = 8 elements, got 4
// LOWER: {{.*}}errors.mlir:[[@LINE+3]]:8: error: 'dq.onnx_dequantize_linear' op per-axis x_scale must have dim(axis) = 8 elements, got 4
// LOWER-NOT: IR Dump
func.func @per_axis_length(%x: tensor<4x8xi8>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK: {{.*}}errors.mlir:[[@LINE+3]]:8: error: 'dq.dequantize' op attribute "zero_point_map" is expected but not provided
// LOWER: {{.*}}errors.mlir:[[@LINE+2]]:8: error: 'dq.dequantize' op attribute "zero_point_map" is expected but not provided
func.func @missing_map(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The chunk that verifies is printed (unchanged, or lowered).
// CHECK: func.func @good
// CHECK: "dq.onnx_dequantize_linear"
// LOWER: func.func @good
// LOWER-NOT: dq.
// LOWER: linalg.generic
func.func @good(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
