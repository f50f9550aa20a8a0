// --pass-pipeline takes a textual pipeline mixing dq passes (nested on func.func) and upstream ones.
// RUN: dequant-opt %s --pass-pipeline='builtin.module(func.func(dq-to-linalg),canonicalize)' | FileCheck %s
// RUN: dequant-opt %s --pass-pipeline='builtin.module(func.func(dq-to-linalg),canonicalize)' --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP
// The bare list form (no builtin.module) is accepted too.
// RUN: dequant-opt %s --pass-pipeline='dq-normalize,dq-to-linalg' | FileCheck %s
// Flags and --pass-pipeline together are refused.
// RUN: not dequant-opt %s --dq-to-linalg --pass-pipeline='canonicalize' 2>&1 | FileCheck %s --check-prefix=BOTH

// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @per_axis0
// CHECK-NOT: dq.
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[AXIS]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NOT: dq.

// DUMP: IR Dump After dq-to-linalg (dq-to-linalg)
// DUMP: func.func @per_axis0
// DUMP: linalg.generic
// DUMP: IR Dump After Canonicalizer (canonicalize)
// DUMP: func.func @per_axis0
// DUMP-NOT: IR Dump

// BOTH: error: give passes as flags or as --pass-pipeline, not both
func.func @per_axis0(%x: tensor<4x8xui8>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 0 : i64} : (tensor<4x8xui8>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
