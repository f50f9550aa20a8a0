// RUN: not dequant-opt %s --split-input-file --lower-quant-ops 2>&1 | FileCheck %s
// RUN: not dequant-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(lower-quant-ops))' 2>&1 | FileCheck %s

// Upstream's lower-quant-ops lowers casts of !quant.uniform types and aborts the process
// (llvm_unreachable "unexpected quantized type") on any other quantized type. dequant-opt runs
// dq-check-quant-lowerable first, on the same ops, which reports each such cast (found by
// fuzzing). `--lower-quant-ops` at the top is nested on func.func, as mlir-opt nests it.

// CHECK: guard-lower-quant-ops.mlir:[[@LINE+2]]:8: error: lower-quant-ops cannot lower quant.dcast of !quant.any<i8:f32>: it lowers !quant.uniform types only
func.func @any(%q: tensor<4x!quant.any<i8:f32>>) -> tensor<4xf32> {
  %y = quant.dcast %q : tensor<4x!quant.any<i8:f32>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK: guard-lower-quant-ops.mlir:[[@LINE+2]]:8: error: lower-quant-ops cannot lower quant.qcast of !quant.any<i8<-8:7>:f32>
func.func @any_scalar(%x: f32) -> !quant.any<i8<-8:7>:f32> {
  %q = quant.qcast %x : f32 to !quant.any<i8<-8:7>:f32>
  return %q : !quant.any<i8<-8:7>:f32>
}

// -----

// A !quant.uniform cast is lowered as before.
// CHECK-LABEL: func.func @uniform
// CHECK: quant.scast
// CHECK: arith.sitofp
// CHECK: arith.mulf
func.func @uniform(%q: tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xf32> {
  %y = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.5:3>> to tensor<4xf32>
  return %y : tensor<4xf32>
}
