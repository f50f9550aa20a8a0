// RUN: dequant-opt %s --dq-to-llvm --split-input-file | FileCheck %s

// Static packed shapes, from ONNX initializers: dq-vectorize stores a tile of bytes x fields flat
// through memref.collapse_shape, whose result type must be the identity layout when the tile is
// a whole buffer of identity layout (it was strided<[1]>, which the verifier rejects: found by
// fuzzing the ONNX importer through a packed zero point of 64 rows of one int4).

// One row of 64 packed int4: the tile is the whole [1, 32, 2] output view.
// CHECK-LABEL: llvm.func @one_packed_row(
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<64xf32>, !llvm.ptr
func.func @one_packed_row(%b: tensor<32xi8>, %s: tensor<f32>) -> tensor<1x64xf32> {
  %x = "dq.unpack"(%b) : (tensor<32xi8>) -> tensor<1x64xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<1x64xi4>, tensor<f32>) -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

