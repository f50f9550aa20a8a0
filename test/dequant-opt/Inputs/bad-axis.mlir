// An input for the tool tests (not a test itself): axis out of range on line 4, column 8.

func.func @bad_axis(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 2 : i64} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
