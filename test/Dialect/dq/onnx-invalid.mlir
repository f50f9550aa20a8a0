// RUN: dequant-opt %s --split-input-file --verify-diagnostics

// One broken op per split; each expected error names the rule it breaks (dialect/onnx.py,
// dialect/canonical.py, and the IRDL structure in dialect/dq.irdl.mlir).

// ===== dq.onnx_dequantize_linear: element types =====

func.func @x_not_t1(%x: tensor<4x8xi64>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.onnx_dequantize_linear' op x must be a tensor of T1 (f4E2M1FN, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, i16, i2, i32, i4, i8, ui16, ui2, ui4, ui8), got i64}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi64>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// float8e8m0 is a scale type (T2), not a storage type.
func.func @x_e8m0(%x: tensor<4x8xf8E8M0FNU>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x must be a tensor of T1 (f4E2M1FN, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, i16, i2, i32, i4, i8, ui16, ui2, ui4, ui8), got f8E8M0FNU}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xf8E8M0FNU>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @x_float(%x: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x must be a tensor of T1 (f4E2M1FN, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, i16, i2, i32, i4, i8, ui16, ui2, ui4, ui8), got f32}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @scale_not_t2(%x: tensor<4x8xi8>, %s: tensor<f64>) -> tensor<4x8xf64> {
  // expected-error @+1 {{x_scale must be a tensor of T2 (bf16, f32, f16, f8E8M0FNU), got f64}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<f64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

func.func @scale_integer(%x: tensor<4x8xi8>, %s: tensor<i32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x_scale must be a tensor of T2 (bf16, f32, f16, f8E8M0FNU), got i32}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = f32} : (tensor<4x8xi8>, tensor<i32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @zero_point_type(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x_zero_point and x must have the same type, got ui8 and i8}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @zero_point_width(%x: tensor<4x8xi4>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x_zero_point and x must have the same type, got i8 and i4}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi4>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== output type =====

func.func @output_dtype_not_t3(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x8xf64> {
  // expected-error @+1 {{output_dtype must be one of T3 (bf16, f32, f16), got f64}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = f64} : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

func.func @output_dtype_e8m0(%x: tensor<4x8xi8>, %s: tensor<f8E8M0FNU>) -> tensor<4x8xf8E8M0FNU> {
  // expected-error @+1 {{output_dtype must be one of T3 (bf16, f32, f16), got f8E8M0FNU}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = f8E8M0FNU} : (tensor<4x8xi8>, tensor<f8E8M0FNU>) -> tensor<4x8xf8E8M0FNU>
  return %y : tensor<4x8xf8E8M0FNU>
}

// -----

func.func @e8m0_scale_without_output_dtype(%x: tensor<4x8xi8>, %s: tensor<f8E8M0FNU>) -> tensor<4x8xf8E8M0FNU> {
  // expected-error @+1 {{a float8e8m0 x_scale needs output_dtype: f8E8M0FNU is not an output type (T3)}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<f8E8M0FNU>) -> tensor<4x8xf8E8M0FNU>
  return %y : tensor<4x8xf8E8M0FNU>
}

// -----

func.func @result_not_scale_type(%x: tensor<4x8xi8>, %s: tensor<f16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{the output type is output_dtype or, in its absence, the type of x_scale: expected f16, got f32}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<f16>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @result_not_output_dtype(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{the output type is output_dtype or, in its absence, the type of x_scale: expected bf16, got f32}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = bf16} : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== x and y shapes =====

func.func @y_shape(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x9xf32> {
  // expected-error @+1 {{x and y must have the same shape}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x9xf32>
  return %y : tensor<4x9xf32>
}

// -----

func.func @y_rank(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<32xf32> {
  // expected-error @+1 {{x and y must have the same shape}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<f32>) -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

// ===== zero point values =====

func.func @int32_nonzero_zero_point(%x: tensor<4x8xi32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %z = arith.constant dense<3> : tensor<i32>
  // expected-error @+1 {{int32 x has no zero point: x_zero_point must be absent or all zero}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// One nonzero element is enough.
func.func @int32_partly_nonzero_zero_point(%x: tensor<4x8xi32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %z = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, -1]> : tensor<8xi32>
  // expected-error @+1 {{int32 x has no zero point: x_zero_point must be absent or all zero}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi32>, tensor<8xf32>, tensor<8xi32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @float8_nonzero_zero_point(%x: tensor<4x8xf8E4M3FN>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %z = arith.constant dense<1.0> : tensor<f8E4M3FN>
  // expected-error @+1 {{a f8E4M3FN x_zero_point must be absent or zero}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @float4_nonzero_zero_point(%x: tensor<4x8xf4E2M1FN>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %z = arith.constant dense<0.5> : tensor<f4E2M1FN>
  // expected-error @+1 {{a f4E2M1FN x_zero_point must be absent or zero}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xf4E2M1FN>, tensor<f32>, tensor<f4E2M1FN>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== block_size and the scale's rank =====

func.func @negative_block_size(%x: tensor<4x64xi8>, %s: tensor<4x2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{block_size must be a positive integer (or 0 when not blocked), got -32}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {block_size = -32 : i64} : (tensor<4x64xi8>, tensor<4x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @blocked_scale_rank(%x: tensor<4x64xi8>, %s: tensor<2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{blocked x_scale must have the rank of x (2), got rank 1}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {block_size = 32 : i64} : (tensor<4x64xi8>, tensor<2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @blocked_scalar_scale(%x: tensor<4x64xi8>, %s: tensor<f32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{blocked x_scale must have the rank of x (2), got rank 0}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {block_size = 32 : i64} : (tensor<4x64xi8>, tensor<f32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @rank2_scale_without_block_size(%x: tensor<4x64xi8>, %s: tensor<4x2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{x_scale must be a scalar or 1-D tensor unless block_size > 0 (blocked quantization)}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x64xi8>, tensor<4x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// ===== axis =====

func.func @per_axis_axis_too_large(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{axis 2 is out of the accepted range [-r, r-1] where r = rank(input) = 2}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 2 : i64} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @per_axis_axis_too_negative(%x: tensor<4x8xi8>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{axis -3 is out of the accepted range [-r, r-1] where r = rank(input) = 2}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = -3 : i64} : (tensor<4x8xi8>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The default axis (1) is out of range for a rank-1 x.
func.func @per_axis_default_axis_rank1(%x: tensor<8xi8>, %s: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{axis 1 is out of the accepted range [-r, r-1] where r = rank(input) = 1}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<8xi8>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @blocked_axis_too_large(%x: tensor<4x64xi8>, %s: tensor<4x2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{axis 5 is out of the accepted range [-r, r-1] where r = rank(input) = 2}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 5 : i64, block_size = 32 : i64} : (tensor<4x64xi8>, tensor<4x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @blocked_axis_too_negative(%x: tensor<4x64xi8>, %s: tensor<4x2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{axis -3 is out of the accepted range [-r, r-1] where r = rank(input) = 2}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = -3 : i64, block_size = 32 : i64} : (tensor<4x64xi8>, tensor<4x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// ===== scale shape =====

func.func @per_axis_length(%x: tensor<4x8xi8>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{per-axis x_scale must have dim(axis) = 8 elements, got 4}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @per_axis_length_negative_axis(%x: tensor<4x8x2xi8>, %s: tensor<4xf32>) -> tensor<4x8x2xf32> {
  // expected-error @+1 {{per-axis x_scale must have dim(axis) = 8 elements, got 4}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = -2 : i64} : (tensor<4x8x2xi8>, tensor<4xf32>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// -----

func.func @blocked_dims(%x: tensor<4x64xi8>, %s: tensor<3x2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{blocked x_scale must have the shape of x except along axis: dim 0 is 3, x has 4}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 32 : i64} : (tensor<4x64xi8>, tensor<3x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @blocked_dims_rank3(%x: tensor<2x32x3xi8>, %s: tensor<2x4x1xf32>) -> tensor<2x32x3xf32> {
  // expected-error @+1 {{blocked x_scale must have the shape of x except along axis: dim 2 is 1, x has 3}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 8 : i64} : (tensor<2x32x3xi8>, tensor<2x4x1xf32>) -> tensor<2x32x3xf32>
  return %y : tensor<2x32x3xf32>
}

// -----

// Di = 64, Si = 2: block_size in [32, 63].
func.func @block_size_below_range(%x: tensor<4x64xi8>, %s: tensor<4x2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{block_size 16 is out of the accepted range [ceil(Di/Si), ceil(Di/(Si-1))-1] for Di = 64, Si = 2}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 16 : i64} : (tensor<4x64xi8>, tensor<4x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @block_size_above_range(%x: tensor<4x64xi8>, %s: tensor<4x2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{block_size 64 is out of the accepted range [ceil(Di/Si), ceil(Di/(Si-1))-1] for Di = 64, Si = 2}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 64 : i64} : (tensor<4x64xi8>, tensor<4x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// Di = 70, Si = 3: block_size in [24, 34].
func.func @block_size_ragged_below(%x: tensor<2x70xi8>, %s: tensor<2x3xf32>) -> tensor<2x70xf32> {
  // expected-error @+1 {{block_size 23 is out of the accepted range [ceil(Di/Si), ceil(Di/(Si-1))-1] for Di = 70, Si = 3}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 23 : i64} : (tensor<2x70xi8>, tensor<2x3xf32>) -> tensor<2x70xf32>
  return %y : tensor<2x70xf32>
}

// -----

func.func @block_size_ragged_above(%x: tensor<2x70xi8>, %s: tensor<2x3xf32>) -> tensor<2x70xf32> {
  // expected-error @+1 {{block_size 35 is out of the accepted range [ceil(Di/Si), ceil(Di/(Si-1))-1] for Di = 70, Si = 3}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 35 : i64} : (tensor<2x70xi8>, tensor<2x3xf32>) -> tensor<2x70xf32>
  return %y : tensor<2x70xf32>
}

// -----

// ===== zero point shape =====

func.func @per_axis_zero_point_shape(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<4xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x_zero_point shape must match x_scale: [4] vs [8]}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<8xf32>, tensor<4xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @per_tensor_zero_point_shape(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x_zero_point shape must match x_scale: [8] vs []}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @blocked_zero_point_shape(%x: tensor<4x64xi4>, %s: tensor<4x2xf32>, %z: tensor<4x1xi4>) -> tensor<4x64xf32> {
  // expected-error @+1 {{x_zero_point shape must match x_scale: [4, 1] vs [4, 2]}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {block_size = 32 : i64} : (tensor<4x64xi4>, tensor<4x2xf32>, tensor<4x1xi4>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// ===== attribute kinds =====

func.func @axis_float(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'axis' must be a 64-bit integer attribute (i64)}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1.0 : f32} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @axis_i32(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'axis' must be a 64-bit integer attribute (i64)}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i32} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @block_size_string(%x: tensor<4x64xi8>, %s: tensor<4x2xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{attribute 'block_size' must be a 64-bit integer attribute (i64)}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {block_size = "32"} : (tensor<4x64xi8>, tensor<4x2xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

func.func @output_dtype_not_type(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'output_dtype' must be a type attribute}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = 1 : i64} : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== structure (IRDL) =====

func.func @scale_not_tensor(%x: tensor<4x8xi8>, %s: f32) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.f32'}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, f32) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @x_memref(%x: memref<4x8xi8>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.memref'}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (memref<4x8xi8>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @x_unranked(%x: tensor<*xi8>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.unranked_tensor'}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<*xi8>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @missing_scale(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{op expects at least 2 operands, but got 1}}
  %y = "dq.onnx_dequantize_linear"(%x) : (tensor<4x8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @too_many_operands(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{op expects at most 3 operands, but got 4}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @two_results(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{op expects exactly 1 results, but got 2}}
  %y:2 = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %y#0 : tensor<4x8xf32>
}

// -----

func.func @dequantize_missing_zero_point_map(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op attribute "zero_point_map" is expected but not provided}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_missing_scale_map(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op attribute "scale_map" is expected but not provided}}
  %y = "dq.dequantize"(%x, %s) {zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_map_not_affine_map(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected base attribute 'builtin.affine_map' but got 'builtin.integer'}}
  %y = "dq.dequantize"(%x, %s) {scale_map = 1 : i64, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_missing_scale(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{op expects at least 2 operands, but got 1}}
  %y = "dq.dequantize"(%x) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// ===== dq.dequantize (canonical.py) =====

func.func @dequantize_zero_point_mode(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.dequantize' op zero_point_mode must be one of subtract, add}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>, zero_point_mode = "multiply"} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_unpack(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{unpack must be one of none, int4x4}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>, unpack = "int2x8"} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_mode_not_string(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'zero_point_mode' must be a string attribute}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>, zero_point_mode = 0 : i64} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_unpack_needs_i16(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{unpack = "int4x4" needs i16 storage}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>, unpack = "int4x4"} : (tensor<4x8xi8>, tensor<f32>) -> tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}

// -----

func.func @dequantize_float_storage(%x: tensor<4x8xf16>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x must be an integer or float8/float4 storage type, got f16}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xf16>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_e8m0_storage(%x: tensor<4x8xf8E8M0FNU>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{x must be an integer or float8/float4 storage type, got f8E8M0FNU}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xf8E8M0FNU>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_scale_type(%x: tensor<4x8xi8>, %s: tensor<i8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{scale must be one of f16, bf16, f32, f64, f8E8M0FNU, got i8}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xi8>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_result_type(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{result must be a tensor of f16, bf16, f32, f64}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x8xi32>
  return %y : tensor<4x8xi32>
}

// -----

func.func @dequantize_added_zero_point_integer(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{an added zero point must be a float tensor}}
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>, zero_point_mode = "add"} : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_subtracted_zero_point_float(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a subtracted zero point of integer x must be an integer}}
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xi8>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_subtracted_zero_point_float_type(%x: tensor<4x8xf8E4M3FN>, %s: tensor<f32>, %z: tensor<f8E5M2>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a subtracted zero point of float x must have x's type f8E4M3FN, got f8E5M2}}
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xf8E4M3FN>, tensor<f32>, tensor<f8E5M2>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// With int4x4 unpacking the zero point is i8 (read as zp & 0xF), not the i16 storage type.
func.func @dequantize_unpack_zero_point_type(%x: tensor<4x8xi16>, %s: tensor<f32>, %z: tensor<i16>) -> tensor<16x8xf32> {
  // expected-error @+1 {{an int4x4 zero point must be i8, got i16}}
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>, unpack = "int4x4"} : (tensor<4x8xi16>, tensor<f32>, tensor<i16>) -> tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}

// -----

func.func @dequantize_rank(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<32xf32> {
  // expected-error @+1 {{x and the result must have the same rank}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0) -> ()>, zero_point_map = affine_map<(d0) -> ()>} : (tensor<4x8xi8>, tensor<f32>) -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

func.func @dequantize_shape(%x: tensor<4x8xi8>, %s: tensor<f32>) -> tensor<4x7xf32> {
  // expected-error @+1 {{x and the result must have the same shape}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}

// -----

func.func @dequantize_unpack_rank0(%x: tensor<i16>, %s: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{unpack = "int4x4" needs x of rank >= 1}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<() -> ()>, zero_point_map = affine_map<() -> ()>, unpack = "int4x4"} : (tensor<i16>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @dequantize_unpack_dim0(%x: tensor<4x8xi16>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{with unpack = "int4x4" the result's dim 0 must be 4 times x's}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>, unpack = "int4x4"} : (tensor<4x8xi16>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_unpack_other_dims(%x: tensor<4x8xi16>, %s: tensor<f32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{x and the result must have the same shape}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> ()>, zero_point_map = affine_map<(d0, d1) -> ()>, unpack = "int4x4"} : (tensor<4x8xi16>, tensor<f32>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}

// -----

func.func @dequantize_scale_map_dims(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{scale_map must have 2 dims and no symbols}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0) -> (d0)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_scale_map_symbols(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{scale_map must have 2 dims and no symbols}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1)[s0] -> (d1 + s0)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_scale_map_results(%x: tensor<4x8xi8>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{scale_map must have one result per scale dim (1)}}
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d0, d1)>, zero_point_map = affine_map<(d0, d1) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_zero_point_map_results(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{zero_point_map must have one result per zero_point dim (1)}}
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1) -> ()>} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dequantize_zero_point_map_dims(%x: tensor<4x8xi8>, %s: tensor<8xf32>, %z: tensor<8xi8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{zero_point_map must have 2 dims and no symbols}}
  %y = "dq.dequantize"(%x, %s, %z) {scale_map = affine_map<(d0, d1) -> (d1)>, zero_point_map = affine_map<(d0, d1, d2) -> (d1)>} : (tensor<4x8xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A non-splat float8 constant zero point is read from its printed form.
func.func @float8_zero_point_non_splat(%x: tensor<4x2xf8E4M3FN>, %s: tensor<2xf32>) -> tensor<4x2xf32> {
  %z = arith.constant dense<[0.0, 2.0]> : tensor<2xf8E4M3FN>
  // expected-error @+1 {{a f8E4M3FN x_zero_point must be absent or zero}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x2xf8E4M3FN>, tensor<2xf32>, tensor<2xf8E4M3FN>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
