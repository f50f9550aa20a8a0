// RUN: dequant-opt %s --split-input-file --verify-diagnostics

// dq.onednn_dynamic_dequantize: one broken op per split, one case per message of each rule in
// dialect/onednn.py (_types, _shape, _qtype, _one_d, _axis, _lengths), attribute kinds
// (dialect/attributes.py) and the IRDL structure (dialect/dq.irdl.mlir).

// ===== _types: T1 input, T2 scales and output, T3 zps =====

func.func @input_s32(%x: tensor<4x8xi32>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op src must be a s8, u8, s4 or u4 tensor, got i32}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi32>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @input_float(%x: tensor<4x8xf32>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op src must be a s8, u8, s4 or u4 tensor, got f32}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @scales_f16(%x: tensor<4x8xi8>, %s: tensor<1xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op dst has the scales' type: expected f16, got f32}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi8>, tensor<1xf16>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @zps_s16(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<1xi16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op zps of a s8 src must be s8, u8, s32, got i16}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xi16>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @zps_float(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op zps of a s8 src must be s8, u8, s32, got f32}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @output_f16(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op dst has the scales' type: expected f32, got f16}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// ===== _shape: output has the shape of input =====

func.func @output_dim(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<4x9xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op dst must have the shape of src: expected [4, 8], got [4, 9]}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x9xf32>
  return %y : tensor<4x9xf32>
}

// -----

func.func @output_rank(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op dst must have the shape of src: expected [4, 8], got [32]}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

// ===== _qtype: "per_tensor" or "per_channel" =====

func.func @qtype_unknown(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op qtype per_group needs group_shape}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_group"} : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== _per_channel: per_channel scales and zps are 1-D (per_tensor ones may have any rank) =====

func.func @scales_rank0(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op for qtype = per_channel, scales must be a 1D tensor, got rank 0}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel"} : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @scales_rank2(%x: tensor<4x8xi8>, %s: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op for qtype = per_channel, scales must be a 1D tensor, got rank 2}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel"} : (tensor<4x8xi8>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @zps_rank0(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<i8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op for qtype = per_channel, zps must be a 1D tensor, got rank 0}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel"} : (tensor<4x8xi8>, tensor<8xf32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== _axis: per_channel axis in [-r, r-1] =====

func.func @axis_r(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op axis 2 must be in [-r, r-1] where r = rank(src) = 2}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel", axis = 2 : i64} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @axis_below_minus_r(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op axis -3 must be in [-r, r-1] where r = rank(src) = 2}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel", axis = -3 : i64} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A rank-0 input has no channel axis.
func.func @axis_rank0(%x: tensor<i8>, %s: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op axis 0 must be in [-r, r-1] where r = rank(src) = 0}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel", axis = 0 : i64} : (tensor<i8>, tensor<1xf32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// ===== _lengths: one element per tensor, dim(axis) elements per channel =====

func.func @per_tensor_scales_length(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op for qtype = per_tensor, there should be only one element in the scales tensor, got shape [8]}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @per_tensor_zps_length(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<2xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op for qtype = per_tensor, there should be only one element in the zps tensor, got shape [2]}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_tensor"} : (tensor<4x8xi8>, tensor<1xf32>, tensor<2xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Per channel along the default axis 1, not along axis 0.
func.func @per_channel_scales_length(%x: tensor<4x8xi8>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op for qtype = per_channel, the element number of scales should equal dim(axis) = 8, got 4}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel"} : (tensor<4x8xi8>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A negative axis names dim(r + axis): -3 is dim 0 (4 elements).
func.func @per_channel_negative_axis_length(%x: tensor<4x8x2xi8>, %s: tensor<2xf32>) -> tensor<4x8x2xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op for qtype = per_channel, the element number of scales should equal dim(axis) = 4, got 2}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel", axis = -3 : i64} : (tensor<4x8x2xi8>, tensor<2xf32>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// -----

func.func @per_channel_zps_length(%x: tensor<4x8xi8>, %s: tensor<4xf32>, %z: tensor<8xi32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op for qtype = per_channel, the element number of zps should equal dim(axis) = 4, got 8}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel", axis = 0 : i64} : (tensor<4x8xi8>, tensor<4xf32>, tensor<8xi32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== Attribute kinds =====

func.func @qtype_not_string(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op attribute 'qtype' must be a string attribute}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = 0 : i64} : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @axis_i32(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onednn_dynamic_dequantize' op attribute 'axis' must be a 64-bit integer attribute (i64)}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {qtype = "per_channel", axis = 1 : i32} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== IRDL structure =====

// `scales` is required.
func.func @missing_scales(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{op expects at least 2 operands, but got 1}}
  %y = "dq.onednn_dynamic_dequantize"(%x) : (tensor<4x8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @too_many_operands(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{op expects at most 3 operands, but got 4}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z, %z) : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @input_unranked(%x: tensor<*xi8>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.unranked_tensor'}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<*xi8>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @missing_result(%x: tensor<4x8xi8>, %s: tensor<1xf32>) {
  // expected-error @+1 {{op expects exactly 1 results, but got 0}}
  "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi8>, tensor<1xf32>) -> ()
  return
}
