// Kernels compiled ahead of time for the C test (test/c/main.c):
//   dequant-opt test/c/kernels.mlir --emit=object -o kernels.o   (also writes kernels.h)

// ONNX int8, per-axis along axis 0, with zero point.
func.func @per_axis(%x: tensor<?x?xi8>, %s: tensor<?xf32>, %z: tensor<?xi8>) -> tensor<?x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64} : (tensor<?x?xi8>, tensor<?xf32>, tensor<?xi8>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// ONNX int4 (one element per byte at the C interface), blocks of 2 along axis 1.
func.func @blocked_i4(%x: tensor<2x4xi4>, %s: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x4xi4>, tensor<2x2xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// OpenPPL int4x4: one int16 holds rows 0..3 of a column.
func.func @pmx_int4(%x: tensor<1x2xi16>, %s: tensor<f32>) -> tensor<4x2xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<1x2xi16>, tensor<f32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// ONNX int4 packed two per byte (dq.packed), per-tensor, odd dims: the descriptor has the
// logical sizes, the data is 8 bytes for 15 elements.
func.func @packed_i4(%x: tensor<?x?xi4> {dq.packed}, %s: tensor<f32>) -> tensor<?x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<?x?xi4>, tensor<f32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
