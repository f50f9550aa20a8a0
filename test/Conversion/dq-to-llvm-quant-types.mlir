// RUN: not dequant-opt %s --dq-to-llvm 2>&1 | FileCheck %s
// RUN: not dequant-opt %S/quant-to-dq.mlir --split-input-file --quant-to-dq --dq-to-llvm 2>&1 | FileCheck %s --check-prefix=LEFT
// A tensor of quantized type has no memref form: bufferization asserted (the process aborted).
// dq-check-lowerable, first in dq-to-llvm, makes it an error at the op or function holding it.

// CHECK: dq-to-llvm-quant-types.mlir:[[@LINE+1]]:1: error: cannot lower a tensor of !quant.uniform<i8:f32, 5.000000e-01:3>: it has no memref form (lower quant types first: quant-to-dq, or upstream lower-quant-ops)
func.func @quantized_argument(%q: tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xf32> {
  %y = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.5:3>> to tensor<4xf32>
  return %y : tensor<4xf32>
}
// The quant-to-dq test file, lowered after quant-to-dq: the ops quant-to-dq left alone are errors.
// LEFT: quant-to-dq.mlir:{{[0-9]+}}:{{[0-9]+}}: error: cannot lower a tensor of !quant.uniform<u32:f32, 5.000000e-01:7>
// LEFT-NOT: Assertion
