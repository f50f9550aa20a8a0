// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --dq-unpack-to-iree-cpu | FileCheck %s

// dq-unpack-to-iree-cpu (passes/unpack_to_iree_cpu.py): dq-unpack-to-iree for IREE's llvm-cpu
// backend, only where the last dim is a multiple of 64 or a power of two. IREE's CPU codegen
// reads any other i4 tensor with masked `vector<Nxi4>` loads it cannot legalize, so those stay
// dq.unpack (dq's in-place read of the bytes, dq-to-linalg).

// Zero points [2, 33] (blocked int4, N = 33): stays dq.unpack.
// CHECK-LABEL: func.func @odd_last_dim
// CHECK-NOT: iree_tensor_ext.bitcast
// CHECK: dq.unpack
func.func @odd_last_dim(%b: tensor<33xi8>) -> tensor<2x33xi4> {
  %x = "dq.unpack"(%b) : (tensor<33xi8>) -> tensor<2x33xi4>
  return %x : tensor<2x33xi4>
}

// -----

// Even but no multiple of 64 nor a power of two ([K / B, 500]; 5000 is a multiple of 8): stays.
// CHECK-LABEL: func.func @even_last_dim
// CHECK-NOT: iree_tensor_ext.bitcast
// CHECK: dq.unpack
// CHECK-NOT: iree_tensor_ext.bitcast
// CHECK: dq.unpack
func.func @even_last_dim(%b: tensor<500xi8>, %c: tensor<2500xi8>) -> (tensor<2x500xi4>, tensor<1x5000xui4>) {
  %x = "dq.unpack"(%b) : (tensor<500xi8>) -> tensor<2x500xi4>
  %y = "dq.unpack"(%c) : (tensor<2500xi8>) -> tensor<1x5000xui4>
  return %x, %y : tensor<2x500xi4>, tensor<1x5000xui4>
}

// -----

// Weights read by the fused contraction, N-major [33, 2, 32] (the last dim a block of 32), and
// [3, 192]: bitcasts, whatever the other dims.
// CHECK-LABEL: func.func @aligned_last_dim
// CHECK-NOT: dq.unpack
// CHECK: "iree_tensor_ext.bitcast"(%{{.*}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<1056xi8>) -> tensor<33x2x32xi4>
// CHECK: "iree_tensor_ext.bitcast"(%{{.*}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<288xi8>) -> tensor<3x192xi4>
func.func @aligned_last_dim(%b: tensor<1056xi8>, %c: tensor<288xi8>) -> (tensor<33x2x32xi4>, tensor<3x192xi4>) {
  %x = "dq.unpack"(%b) : (tensor<1056xi8>) -> tensor<33x2x32xi4>
  %y = "dq.unpack"(%c) : (tensor<288xi8>) -> tensor<3x192xi4>
  return %x, %y : tensor<33x2x32xi4>, tensor<3x192xi4>
}
