// RUN: dequant-opt %s --split-input-file --verify-diagnostics

// dq.pmx_dequantize_linear: one broken op per split, one case per message of each rule in
// dialect/pmx.py (_data_type, _output, _zero_point, _granularity), attribute kinds
// (dialect/attributes.py) and the IRDL structure (dialect/dq.irdl.mlir).

// ===== _data_type: quant_data_type and X's storage type =====

func.func @quant_data_type_unknown(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op quant_data_type must be "int4" or "int8", got "int2"}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int2", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @int8_x_i16(%x: tensor<4x16xi16>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op X must be int8 for quant_data_type "int8", got i16}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi16>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// T1 is int8: uint8 storage is not accepted.
func.func @int8_x_u8(%x: tensor<4x16xui8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op X must be int8 for quant_data_type "int8", got ui8}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xui8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @int4_x_i8(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op X must be int16 (packed int4x4) for quant_data_type "int4", got i8}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// int4 X is not MLIR's i4: it is i16 packing four values.
func.func @int4_x_i4(%x: tensor<16x16xi4>, %s: tensor<f32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op X must be int16 (packed int4x4) for quant_data_type "int4", got i4}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<16x16xi4>, tensor<f32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

func.func @int4_rank0(%x: tensor<i16>, %s: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op int4 X (int4x4 packed along dim 0) must have rank >= 1}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<i16>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// ===== _output: T2 Scale, Y of the Scale's type and X's unpacked shape =====

func.func @scale_bf16(%x: tensor<4x16xi8>, %s: tensor<bf16>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op Scale must be float32 or float16 (T2), got bf16}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<bf16>) -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

func.func @y_type(%x: tensor<4x16xi8>, %s: tensor<f16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op Y must have the Scale's type (T2): expected f16}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f16>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @int8_y_shape(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op Y must have the unpacked shape of X: expected [4, 16], got [4, 8]}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// int4 Y has 4 times X's rows, not X's shape.
func.func @int4_y_packed_shape(%x: tensor<2x16xi16>, %s: tensor<f32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op Y must have the unpacked shape of X: expected [8, 16], got [2, 16]}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<2x16xi16>, tensor<f32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// Nor are the four values unpacked along the last dim.
func.func @int4_y_unpacked_last(%x: tensor<2x16xi16>, %s: tensor<f32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op Y must have the unpacked shape of X: expected [8, 16], got [2, 64]}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<2x16xi16>, tensor<f32>) -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

func.func @int4_y_dynamic_shape(%x: tensor<?x16xi16>, %s: tensor<f32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op Y must have the unpacked shape of X: expected [?, 16], got [?, 8]}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<?x16xi16>, tensor<f32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// ===== _zero_point: has_zeropoint, float_zeropoint and the ZeroPoint operand =====

func.func @has_zeropoint_without_operand(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op ZeroPoint must appear when has_zeropoint == True}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// has_zeropoint defaults to false: a ZeroPoint operand is not silently ignored.
func.func @operand_without_has_zeropoint(%x: tensor<4x16xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op a ZeroPoint is given but has_zeropoint is False}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f32>, tensor<i8>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @float_zeropoint_without_has_zeropoint(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op float_zeropoint == True needs has_zeropoint == True}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64, float_zeropoint = true} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @float_zeropoint_integer(%x: tensor<4x16xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op ZeroPoint data type MUST be floating point when float_zeropoint == True, got i8}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true, float_zeropoint = true} : (tensor<4x16xi8>, tensor<f32>, tensor<i8>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// T3's floats are float16 and float32.
func.func @float_zeropoint_bf16(%x: tensor<4x16xi8>, %s: tensor<f32>, %z: tensor<bf16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op ZeroPoint data type MUST be floating point when float_zeropoint == True, got bf16}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true, float_zeropoint = true} : (tensor<4x16xi8>, tensor<f32>, tensor<bf16>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @integer_zeropoint_float(%x: tensor<4x16xi8>, %s: tensor<f32>, %z: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op an integer ZeroPoint must be int8 (T3), got f32}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true} : (tensor<4x16xi8>, tensor<f32>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// An int4 zero point is int8 too (its low nibble is used), not X's packed i16.
func.func @integer_zeropoint_i16(%x: tensor<2x16xi16>, %s: tensor<f32>, %z: tensor<i16>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op an integer ZeroPoint must be int8 (T3), got i16}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int4", group_size = 0 : i64, has_zeropoint = true} : (tensor<2x16xi16>, tensor<f32>, tensor<i16>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

func.func @zeropoint_shape(%x: tensor<4x256xi8>, %s: tensor<4x2xf32>, %z: tensor<4x1xi8>) -> tensor<4x256xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op ZeroPoint shape must be the same as Scale's}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", has_zeropoint = true} : (tensor<4x256xi8>, tensor<4x2xf32>, tensor<4x1xi8>) -> tensor<4x256xf32>
  return %y : tensor<4x256xf32>
}

// -----

// Per tensor too: a scalar Scale and a one-element 1-D ZeroPoint do not mix.
func.func @zeropoint_rank(%x: tensor<4x16xi8>, %s: tensor<f32>, %z: tensor<1xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op ZeroPoint shape must be the same as Scale's}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true, float_zeropoint = true} : (tensor<4x16xi8>, tensor<f32>, tensor<1xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// ===== _granularity: quant_axis, group_size and the Scale's shape =====

func.func @quant_axis_2(%x: tensor<4x16x8xi8>, %s: tensor<4x16x4xf32>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op quant_axis only accepts 0 or 1, got 2}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", quant_axis = 2 : i64, group_size = 2 : i64} : (tensor<4x16x8xi8>, tensor<4x16x4xf32>) -> tensor<4x16x8xf32>
  return %y : tensor<4x16x8xf32>
}

// -----

func.func @quant_axis_negative(%x: tensor<4x16xi8>, %s: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op quant_axis only accepts 0 or 1, got -1}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", quant_axis = -1 : i64, group_size = 2 : i64} : (tensor<4x16xi8>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @group_size_negative(%x: tensor<4x16xi8>, %s: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op group_size must be >= 0, got -2}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = -2 : i64} : (tensor<4x16xi8>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A rank-1 Y has no axis 1 (the default quant_axis) to group along.
func.func @group_axis_beyond_rank(%x: tensor<256xi8>, %s: tensor<2xf32>) -> tensor<256xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op quant_axis 1 must be less than the rank of Y (1)}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8"} : (tensor<256xi8>, tensor<2xf32>) -> tensor<256xf32>
  return %y : tensor<256xf32>
}

// -----

// The default group_size 128 does not divide 64.
func.func @group_not_dividing(%x: tensor<4x64xi8>, %s: tensor<4x1xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op the grouped dimension (dim 1 = 64) must be divisible by group_size 128}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8"} : (tensor<4x64xi8>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// Along axis 0 the unpacked int4 rows are grouped: 4 * 3 = 12 rows, not divisible by 8.
func.func @int4_group_not_dividing_rows(%x: tensor<3x16xi16>, %s: tensor<1x16xf32>) -> tensor<12x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op the grouped dimension (dim 0 = 12) must be divisible by group_size 8}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", quant_axis = 0 : i64, group_size = 8 : i64} : (tensor<3x16xi16>, tensor<1x16xf32>) -> tensor<12x16xf32>
  return %y : tensor<12x16xf32>
}

// -----

// Groups along axis 1 keep dim 0 whole: Scale is (4, 256/128), not (4/128, ...) nor transposed.
func.func @group_scale_shape(%x: tensor<4x256xi8>, %s: tensor<2x4xf32>) -> tensor<4x256xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op grouped Scale must have the shape of Y with dim quant_axis divided by group_size: [4, 2]}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8"} : (tensor<4x256xi8>, tensor<2x4xf32>) -> tensor<4x256xf32>
  return %y : tensor<4x256xf32>
}

// -----

// int4 groups count unpacked rows: the Scale has 8 rows for X's 2 packed ones.
func.func @int4_group_scale_packed_rows(%x: tensor<2x256xi16>, %s: tensor<2x2xf32>) -> tensor<8x256xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op grouped Scale must have the shape of Y with dim quant_axis divided by group_size: [8, 2]}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4"} : (tensor<2x256xi16>, tensor<2x2xf32>) -> tensor<8x256xf32>
  return %y : tensor<8x256xf32>
}

// -----

// A grouped Scale has Y's rank: the per-tensor shapes need group_size = 0.
func.func @group_scale_per_tensor(%x: tensor<4x256xi8>, %s: tensor<f32>) -> tensor<4x256xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op grouped Scale must have the shape of Y with dim quant_axis divided by group_size: [4, 2]}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8"} : (tensor<4x256xi8>, tensor<f32>) -> tensor<4x256xf32>
  return %y : tensor<4x256xf32>
}

// -----

func.func @no_group_scale_shape(%x: tensor<4x16xi8>, %s: tensor<4x2xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op with group_size == 0, Scale must be per-tensor ((), (1) or all ones) or per-channel ((d0, 1, ...) or (d0))}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<4x2xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Per channel is along dim 0 only: one scale per column, (1, d1), is not.
func.func @no_group_per_column(%x: tensor<4x16xi8>, %s: tensor<1x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op with group_size == 0, Scale must be per-tensor ((), (1) or all ones) or per-channel ((d0, 1, ...) or (d0))}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<1x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// int4 per channel counts unpacked rows (8), not X's packed ones (2).
func.func @int4_per_channel_packed_rows(%x: tensor<2x16xi16>, %s: tensor<2x1xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op with group_size == 0, Scale must be per-tensor ((), (1) or all ones) or per-channel ((d0, 1, ...) or (d0))}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<2x16xi16>, tensor<2x1xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A rank-0 Y takes only a per-tensor Scale.
func.func @no_group_rank0(%x: tensor<i8>, %s: tensor<2xf32>) -> tensor<f32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op with group_size == 0, Scale must be per-tensor ((), (1) or all ones) or per-channel ((d0, 1, ...) or (d0))}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<i8>, tensor<2xf32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// ===== Attribute kinds =====

func.func @has_zeropoint_not_bool(%x: tensor<4x16xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op attribute 'has_zeropoint' must be a bool attribute}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = 1 : i64} : (tensor<4x16xi8>, tensor<f32>, tensor<i8>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @group_size_i32(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op attribute 'group_size' must be a 64-bit integer attribute (i64)}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i32} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @quant_method_not_string(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op attribute 'quant_method' must be a string attribute}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64, quant_method = 0 : i64} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// ===== IRDL structure =====

func.func @missing_quant_data_type(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'dq.pmx_dequantize_linear' op attribute "quant_data_type" is expected but not provided}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @quant_data_type_not_string(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{expected base attribute 'builtin.string' but got 'builtin.integer'}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = 8 : i64, group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Scale is required.
func.func @missing_scale(%x: tensor<4x16xi8>) -> tensor<4x16xf32> {
  // expected-error @+1 {{op expects at least 2 operands, but got 1}}
  %y = "dq.pmx_dequantize_linear"(%x) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
