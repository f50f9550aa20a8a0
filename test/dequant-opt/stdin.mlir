// The input is read from stdin when no file is given (or given as -).
// RUN: dequant-opt < %s | FileCheck %s
// RUN: dequant-opt - --dq-normalize < %s | FileCheck %s --check-prefix=NORM
// Diagnostics on stdin input name <stdin>.
// RUN: not dequant-opt --dq-to-linalg < %S/Inputs/bad-axis.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @blocked
// CHECK: "dq.onnx_dequantize_linear"(%{{[^,]*}}, %{{[^,]*}}) {axis = 0 : i64, block_size = 2 : i64} : (tensor<4x3xi8>, tensor<2x3xf32>) -> tensor<4x3xf32>

// NORM: #[[BLOCK:map[0-9]*]] = affine_map<(d0, d1) -> (d0 floordiv 2, d1)>
// NORM-LABEL: func.func @blocked
// NORM: "dq.dequantize"(%{{[^,]*}}, %{{[^,]*}}) {scale_map = #[[BLOCK]], unpack = "none", zero_point_map = #[[BLOCK]], zero_point_mode = "subtract"}

// ERR: <stdin>:4:8: error: 'dq.onnx_dequantize_linear' op axis 2 is out of the accepted range [-r, r-1] where r = rank(input) = 2
func.func @blocked(%x: tensor<4x3xi8>, %s: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 0 : i64, block_size = 2 : i64} : (tensor<4x3xi8>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
