// RUN: dequant-opt %s --split-input-file --verify-diagnostics

// dq.dequantize, the canonical form: a map result must be a dim, a dim floordiv a positive
// constant, or 0 (anything else could read out of bounds), and the scale and zero point dims
// must hold what their maps read (docs/semantics.md#canonical-form).

func.func @offset(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map result d1 + 1000000 must be a dim, a dim floordiv a positive constant, or 0}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1 + 1000000)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @scaled(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map result d1 * 100000000 must be a dim, a dim floordiv a positive constant, or 0}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1 * 100000000)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @floordiv_zero(%x: tensor<4x8xi8>, %s: tensor<4x2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map result d1 floordiv 0 divides by 0: a block size must be positive}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d0, d1 floordiv 0)>, zero_point_map = affine_map<(d0, d1) -> (d0, d1)>} : (tensor<4x8xi8>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @floordiv_negative(%x: tensor<4x8xi8>, %s: tensor<4x2xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map result d1 floordiv -4 divides by -4: a block size must be positive}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d0, d1 floordiv -4)>, zero_point_map = affine_map<(d0, d1) -> (d0, d1)>} : (tensor<4x8xi8>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @symbol(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map must have 2 dims and no symbols}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1)[s0] -> (d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @constant_other_than_zero(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map result 3 must be a dim, a dim floordiv a positive constant, or 0}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (3)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A static dim that does not hold what the map reads: the dq verifier says so (it used to be
// linalg.generic's error after lowering).
func.func @static_mismatch(%x: tensor<4x8xi8>, %s: tensor<7xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map reads dim 0 as d1: it needs 8 elements for an output dim of 8, got 7}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<7xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @block_mismatch(%x: tensor<4x8xi8>, %s: tensor<4x3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map reads dim 1 as d1 floordiv 4: it needs 2 elements for an output dim of 8, got 3}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d0, d1 floordiv 4)>, zero_point_map = affine_map<(d0, d1) -> (d0, d1)>} : (tensor<4x8xi8>, tensor<4x3xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @read_at_zero_of_empty(%x: tensor<4x8xi8>, %s: tensor<0xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map reads index 0 of dim 0, which is empty}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (0)>, zero_point_map = affine_map<(d0, d1) -> (0)>} : (tensor<4x8xi8>, tensor<0xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @results_per_dim(%x: tensor<4x8xi8>, %s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op scale_map must have one result per scale dim (2), got 1}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
