// RUN: dequant-opt %s --dq-packed-arguments --verify-diagnostics

// Only sub-byte tensors are packed.
// expected-error@+1 {{argument 0 is marked dq.packed but is a tensor of i8: only sub-byte types (i4, ui4, f4E2M1FN, i2, ui2) are packed}}
func.func @not_sub_byte(%x: tensor<8xi8> {dq.packed}, %s: tensor<f32>) -> tensor<8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<8xi8>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
