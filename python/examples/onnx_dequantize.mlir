// ONNX DequantizeLinear at every granularity: the shipped example of the README's quick start.
// `dequant-opt --dq-to-linalg` lowers it; `python -m dequant.example` compiles and runs each
// function on random data and checks the numbers against a numpy reference.

// int8, per-tensor, scalar scale and zero point.
func.func @per_tensor_i8(%x: tensor<64x48xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<64x48xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<64x48xi8>, tensor<f32>, tensor<i8>) -> tensor<64x48xf32>
  return %y : tensor<64x48xf32>
}

// uint8, per-axis along axis 0, dynamic dims.
func.func @per_axis_u8(%x: tensor<?x?xui8>, %s: tensor<?xf32>, %z: tensor<?xui8>) -> tensor<?x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64} : (tensor<?x?xui8>, tensor<?xf32>, tensor<?xui8>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// int4, blocked along the last axis (block 32, ragged last block), f16 scales.
func.func @blocked_i4(%x: tensor<16x100xi4>, %s: tensor<16x4xf16>, %z: tensor<16x4xi4>) -> tensor<16x100xf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = -1 : i64, block_size = 32 : i64} : (tensor<16x100xi4>, tensor<16x4xf16>, tensor<16x4xi4>) -> tensor<16x100xf16>
  return %y : tensor<16x100xf16>
}

// float8 e4m3fn with float8 e8m0 (power of two) block scales, bf16 output (opset 24 MX style).
func.func @mx_f8(%x: tensor<8x64xf8E4M3FN>, %s: tensor<8x2xf8E8M0FNU>) -> tensor<8x64xbf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 32 : i64, output_dtype = bf16} : (tensor<8x64xf8E4M3FN>, tensor<8x2xf8E8M0FNU>) -> tensor<8x64xbf16>
  return %y : tensor<8x64xbf16>
}
