// --mlir-print-ir-after-all prints the IR after every pass to stderr, for dq and upstream passes,
// the final result still going to stdout.
// RUN: dequant-opt %s --dq-to-linalg --canonicalize --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s
// RUN: dequant-opt %s --dq-to-linalg --mlir-print-ir-after-all 2>/dev/null | FileCheck %s --check-prefix=OUT

// CHECK: // -----// IR Dump After dq-to-linalg (dq-to-linalg) //----- //
// CHECK: func.func @blocked
// CHECK: linalg.generic
// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CHECK: func.func @blocked
// CHECK-NOT: IR Dump

// OUT-NOT: IR Dump
// OUT: func.func @blocked
// OUT: linalg.generic
// OUT-NOT: IR Dump
func.func @blocked(%x: tensor<4x64xi8>, %s: tensor<4x2xf32>) -> tensor<4x64xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {block_size = 32 : i64} : (tensor<4x64xi8>, tensor<4x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
