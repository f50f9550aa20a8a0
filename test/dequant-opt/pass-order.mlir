// Pass flags run in command-line order, upstream passes (--canonicalize, --cse) mixed with dq ones.
// RUN: dequant-opt %s --dq-normalize | FileCheck %s --check-prefix=NORM
// RUN: dequant-opt %s --dq-normalize --dq-to-linalg --canonicalize --cse | FileCheck %s --check-prefix=LINALG
// RUN: dequant-opt %s --dq-normalize --canonicalize --dq-to-linalg --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: FileCheck %s --check-prefix=LINALG --input-file=%t

// NORM-LABEL: func.func @per_axis
// NORM-NOT: dq.onnx_dequantize_linear
// NORM: "dq.dequantize"
// NORM-NOT: linalg.generic

// LINALG-LABEL: func.func @per_axis
// LINALG-NOT: dq.
// LINALG: linalg.generic
// LINALG-NOT: dq.

// ORDER: IR Dump After dq-normalize (dq-normalize)
// ORDER: "dq.dequantize"
// ORDER: IR Dump After Canonicalizer (canonicalize)
// ORDER: "dq.dequantize"
// ORDER: IR Dump After dq-to-linalg (dq-to-linalg)
// ORDER-NOT: dq.
// ORDER: linalg.generic
// ORDER-NOT: IR Dump After
func.func @per_axis(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
