// A chunk that only emits remarks (or warnings) still prints its module and exits 0, as mlir-opt.
// RUN: dequant-opt %s --dq-to-quant 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.err

// CHECK-LABEL: func.func @scale_argument
// CHECK: "dq.onnx_dequantize_linear"
// REMARK: remarks-keep-output.mlir:[[# @LINE + 3]]:8: remark:
func.func @scale_argument(%x: tensor<4xi8>, %s: tensor<f32>) -> tensor<4xf32> {
  // The scale is an argument, not a constant: quant types cannot carry it.
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4xi8>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
