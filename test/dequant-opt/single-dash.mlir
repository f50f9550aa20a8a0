// Long options after one dash, as mlir-opt spells them, mean the same as after two: pass flags,
// pass options, the tool's own flags and -pass-pipeline.
// RUN: dequant-opt %s -dq-normalize -dq-to-linalg -canonicalize | FileCheck %s
// RUN: dequant-opt %s -pass-pipeline='builtin.module(func.func(dq-normalize,dq-to-linalg),canonicalize)' | FileCheck %s
// RUN: dequant-opt -split-input-file -dq-to-linalg -canonicalize=top-down=false %s -o %t
// RUN: FileCheck %s --input-file=%t
// RUN: not dequant-opt %s -dq-to-lnalg 2>&1 | FileCheck %s --check-prefix=NEAR
// After `--`, a name starting with a dash is the input file.
// RUN: rm -rf %t.dir && mkdir -p %t.dir && cp %s %t.dir/-input.mlir && cd %t.dir && dequant-opt -dq-to-linalg -- -input.mlir | FileCheck %s

// CHECK-LABEL: func.func @per_axis
// CHECK-NOT: dq.
// CHECK: linalg.generic
// NEAR: dequant-opt: error: 'dq-to-lnalg' does not refer to a registered pass or pass pipeline; did you mean 'dq-to-linalg'?
func.func @per_axis(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
