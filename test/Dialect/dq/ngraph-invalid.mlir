// RUN: dequant-opt %s --split-input-file --verify-diagnostics

// dq.ngraph_dequantize: one broken op per split, one case per message of each rule in
// dialect/ngraph.py (_types, _axes, _shapes; wording after nGraph's validate_and_infer_types),
// attribute kinds (dialect/attributes.py) and the IRDL structure (dialect/dq.irdl.mlir).

// ===== _types =====

func.func @type_integer(%x: tensor<2x3xi8>, %s: tensor<i32>, %z: tensor<i8>) -> tensor<2x3xi32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Output element type (i32) must be a floating point type}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = i32} : (tensor<2x3xi8>, tensor<i32>, tensor<i8>) -> tensor<2x3xi32>
  return %y : tensor<2x3xi32>
}

// -----

// nGraph's real types are f16, bf16, f32, f64.
func.func @type_f8(%x: tensor<2x3xi8>, %s: tensor<f8E4M3FN>, %z: tensor<i8>) -> tensor<2x3xf8E4M3FN> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Output element type (f8E4M3FN) must be a floating point type}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f8E4M3FN} : (tensor<2x3xi8>, tensor<f8E4M3FN>, tensor<i8>) -> tensor<2x3xf8E4M3FN>
  return %y : tensor<2x3xf8E4M3FN>
}

// -----

func.func @zero_point_type(%x: tensor<2x3xi8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Zero point element type (ui8) must match input element type (i8)}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3xi8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @input_i16(%x: tensor<2x3xi16>, %s: tensor<f32>, %z: tensor<i16>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Zero point / input element type (i16) must be a quantized type}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3xi16>, tensor<f32>, tensor<i16>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @input_float(%x: tensor<2x3xf16>, %s: tensor<f32>, %z: tensor<f16>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Zero point / input element type (f16) must be a quantized type}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3xf16>, tensor<f32>, tensor<f16>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @scale_type(%x: tensor<2x3xi8>, %s: tensor<f16>, %z: tensor<i8>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Scale element type (f16) must match output element type (f32)}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3xi8>, tensor<f16>, tensor<i8>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @result_type(%x: tensor<2x3xi8>, %s: tensor<f64>, %z: tensor<i8>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op the output element type is `type`: expected f64, got f32}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f64} : (tensor<2x3xi8>, tensor<f64>, tensor<i8>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// ===== _axes: a set of axes of the input =====

func.func @axes_descending(%x: tensor<2x3x4xi8>, %s: tensor<4x2xf32>, %z: tensor<4x2xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op axes must be a set: ascending, without duplicates, got [2, 0]}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 2, 0>} : (tensor<2x3x4xi8>, tensor<4x2xf32>, tensor<4x2xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

func.func @axes_duplicate(%x: tensor<2x3x4xi8>, %s: tensor<3x3xf32>, %z: tensor<3x3xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op axes must be a set: ascending, without duplicates, got [1, 1]}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 1, 1>} : (tensor<2x3x4xi8>, tensor<3x3xf32>, tensor<3x3xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

func.func @axis_rank(%x: tensor<2x3x4xi8>, %s: tensor<4xf32>, %z: tensor<4xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Quantization axis (3) must be less than input shape rank (3)}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 3>} : (tensor<2x3x4xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// nGraph's axes are non-negative: -1 does not count from the back.
func.func @axis_negative(%x: tensor<2x3x4xi8>, %s: tensor<4xf32>, %z: tensor<4xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Quantization axis (-1) must be less than input shape rank (3)}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: -1>} : (tensor<2x3x4xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// ===== _shapes: scale and zero point are the input's shape projected onto axes =====

func.func @scale_zero_point_shapes(%x: tensor<2x3x4xi8>, %s: tensor<3xf32>, %z: tensor<4xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Scale shape ({3}) and zero point shape ({4}) must match}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 1>} : (tensor<2x3x4xi8>, tensor<3xf32>, tensor<4xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

func.func @scale_zero_point_ranks(%x: tensor<2x3x4xi8>, %s: tensor<f32>, %z: tensor<1xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Scale shape ({}) and zero point shape ({1}) must match}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3x4xi8>, tensor<f32>, tensor<1xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Per tensor (axes {}) wants rank-0 scale and zero point, not one-element 1-D ones.
func.func @rank_vs_no_axes(%x: tensor<2x3x4xi8>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Scale / zero point rank (1) does not match the number of quantization axes (0)}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3x4xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

func.func @rank_vs_axes(%x: tensor<2x3x4xi8>, %s: tensor<2xf32>, %z: tensor<2xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Scale / zero point rank (1) does not match the number of quantization axes (2)}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 0, 2>} : (tensor<2x3x4xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// The projection is in ascending axis order: axes {0, 2} of 2x3x4 is 2x4, not 4x2.
func.func @projection_order(%x: tensor<2x3x4xi8>, %s: tensor<4x2xf32>, %z: tensor<4x2xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Scale / zero point shape ({4,2}) must match input shape ({2,3,4}) at the quantization axes ({0,2})}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 0, 2>} : (tensor<2x3x4xi8>, tensor<4x2xf32>, tensor<4x2xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Dynamic dims print as `?`.
func.func @projection_dynamic(%x: tensor<?x3x4xi8>, %s: tensor<?x3xf32>, %z: tensor<?x3xi8>) -> tensor<?x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op Scale / zero point shape ({?,3}) must match input shape ({?,3,4}) at the quantization axes ({0,2})}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 0, 2>} : (tensor<?x3x4xi8>, tensor<?x3xf32>, tensor<?x3xi8>) -> tensor<?x3x4xf32>
  return %y : tensor<?x3x4xf32>
}

// -----

func.func @result_shape(%x: tensor<2x3x4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op the output must have the shape of input: expected [2, 3, 4], got [2, 4, 3]}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4x3xf32>
  return %y : tensor<2x4x3xf32>
}

// -----

func.func @result_rank(%x: tensor<2x3x4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<6x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op the output must have the shape of input: expected [2, 3, 4], got [6, 4]}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}

// -----

// ===== Attribute kinds =====

func.func @axes_not_dense_array(%x: tensor<2x3x4xi8>, %s: tensor<2xf32>, %z: tensor<2xi8>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op attribute 'axes' must be an array<i64> attribute}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = [0]} : (tensor<2x3x4xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// ===== IRDL structure =====

func.func @missing_type(%x: tensor<2x3xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dq.ngraph_dequantize' op attribute "type" is expected but not provided}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @type_not_a_type(%x: tensor<2x3xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected base attribute 'builtin.type' but got 'builtin.string'}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = "f32"} : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// The zero point is required.
func.func @missing_zero_point(%x: tensor<2x3xi8>, %s: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{op expects exactly 3 operands, but got 2}}
  %y = "dq.ngraph_dequantize"(%x, %s) {type = f32} : (tensor<2x3xi8>, tensor<f32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @scale_unranked(%x: tensor<2x3xi8>, %s: tensor<*xf32>, %z: tensor<i8>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.unranked_tensor'}}
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3xi8>, tensor<*xf32>, tensor<i8>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
