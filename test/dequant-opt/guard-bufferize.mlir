// RUN: not dequant-opt %s --split-input-file --one-shot-bufferize=bufferize-function-boundaries 2>&1 | FileCheck %s

// Upstream's one-shot-bufferize makes memrefs of whatever element types the tensors hold, and MLIR
// asserts (the process dies) on a memref of a quant type. dequant-opt runs dq-check-lowerable first,
// which reports the op holding the tensor (found by fuzzing).

// CHECK: guard-bufferize.mlir:[[@LINE+1]]:1: error: cannot lower a tensor of !quant.uniform<i8:f32, 5.000000e-01:3>: it has no memref form
func.func @f(%q: tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xf32> {
  %y = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.5:3>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A declaration's signature counts too (bufferize-function-boundaries rewrites it).
// CHECK: guard-bufferize.mlir:[[@LINE+1]]:1: error: cannot lower a tensor of !quant.uniform<i8:f32, 5.000000e-01:3>: it has no memref form
func.func private @g(tensor<4x!quant.uniform<i8:f32, 0.5:3>>)
