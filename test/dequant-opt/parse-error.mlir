// Unparsable IR is an error at its file:line:col, with a non-zero exit status and no output.
// RUN: not dequant-opt %s > %t.out 2> %t.err
// RUN: FileCheck %s --input-file=%t.err
// RUN: FileCheck %s --check-prefix=EMPTY --allow-empty --input-file=%t.out

// CHECK: {{.*}}parse-error.mlir:[[@LINE+4]]:40: error: use of undeclared SSA value name
// EMPTY-NOT: {{.}}

func.func @undeclared(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
