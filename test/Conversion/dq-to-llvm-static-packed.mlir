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

// -----

// A packed zero point of 64 rows of one int4 (blocked by 32 along 32 columns): its rows are not
// whole bytes, so its 64 values are unpacked as one row of 32 bytes (dq-to-linalg's flat_fields)
// into the i8 zero points, one vector store of the tile.
// CHECK-LABEL: llvm.func @packed_zero_point_rows_of_one(
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 1 : i64} : vector<64xi8>, !llvm.ptr
func.func @packed_zero_point_rows_of_one(%x: tensor<64x32xi4>, %s: tensor<64x1xf32>, %zb: tensor<32xi8>) -> tensor<64x32xf32> {
  %z = "dq.unpack"(%zb) : (tensor<32xi8>) -> tensor<64x1xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 32 : i64} : (tensor<64x32xi4>, tensor<64x1xf32>, tensor<64x1xi4>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
