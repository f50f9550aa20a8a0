// -o writes the output to a file; nothing goes to stdout.
// RUN: dequant-opt %s --dq-to-linalg -o %t > %t.stdout
// RUN: FileCheck %s --input-file=%t
// RUN: FileCheck %s --check-prefix=EMPTY --allow-empty --input-file=%t.stdout
// RUN: dequant-opt %s --dq-to-linalg --output=%t.2
// RUN: FileCheck %s --input-file=%t.2

// CHECK-LABEL: func.func @per_tensor
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: dq.

// EMPTY-NOT: {{.}}
func.func @per_tensor(%x: tensor<8xi16>, %s: tensor<f32>) -> tensor<8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<8xi16>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
