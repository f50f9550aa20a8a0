// An unknown pass flag or pipeline element is an error naming it, with a non-zero exit status and
// the closest registered name when one is close (as mlir-opt suggests).
// RUN: not dequant-opt %s --no-such-pass 2>&1 | FileCheck %s
// RUN: not dequant-opt %s --pass-pipeline='builtin.module(func.func(no-such-pass))' 2>&1 | FileCheck %s
// RUN: not dequant-opt %s --dq-to-lnalg 2>&1 | FileCheck %s --check-prefix=NEAR
// RUN: not dequant-opt %s --pass-pipeline='builtin.module(func.func(canonicalise))' 2>&1 | FileCheck %s --check-prefix=NEAR-UPSTREAM
// A dq pass takes no options.
// RUN: not dequant-opt %s --dq-to-linalg=foo=1 2>&1 | FileCheck %s --check-prefix=OPTIONS
// A missing input file.
// RUN: not dequant-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: dequant-opt: error: 'no-such-pass' does not refer to a registered pass or pass pipeline{{$}}
// CHECK-NOT: func.func
// NEAR: dequant-opt: error: 'dq-to-lnalg' does not refer to a registered pass or pass pipeline; did you mean 'dq-to-linalg'?
// NEAR-UPSTREAM: dequant-opt: error: 'canonicalise' does not refer to a registered pass or pass pipeline; did you mean 'canonicalize'?
// OPTIONS: error: pass 'dq-to-linalg' takes no options
// MISSING: dequant-opt: error: cannot open input '{{.*}}.does-not-exist.mlir': No such file or directory
func.func @f(%x: tensor<8xi8>, %s: tensor<f32>) -> tensor<8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<8xi8>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
