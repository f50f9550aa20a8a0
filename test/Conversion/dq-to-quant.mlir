// RUN: dequant-opt %s --split-input-file --dq-to-quant | FileCheck %s
// RUN: dequant-opt %s --split-input-file --dq-to-quant --verify-diagnostics
// RUN: dequant-opt %s --split-input-file --dq-to-quant --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=KEEP

// dq-to-quant: a dq op whose scale and zero point are arith.constant tensors becomes
// quant.scast (storage tensor -> tensor of !quant.uniform) + quant.dcast (-> the op's output type,
// the expressed type). Granularity: one scale -> per-layer `<i8:f32, s:zp>`; one dim with one scale
// per index -> per-axis `<i8:f32:axis, {...}>`; blocks or several dims -> sub-channel
// `<i8:f32:{dim:block, ...}, {{...}}>`. Unsigned storage is `tensor.bitcast` to the signless tensor
// quant.scast takes, under a `u8` quant type. Every dq op converts through its canonical form.
//
// An op without a quant form is left as is, with a remark at its location (the second RUN line).
// dequant-opt prints no module for a chunk with diagnostics, so the third RUN line reads the ops
// left alone from the IR printed after the pass (KEEP).

// CHECK-LABEL: func.func @per_tensor
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xi8>)
// CHECK-NOT: arith.constant
// CHECK: %[[Q:.*]] = quant.scast %[[X]] : tensor<4x8xi8> to tensor<4x8x!quant.uniform<i8:f32, 5.000000e-01:3>>
// CHECK-NEXT: %[[Y:.*]] = quant.dcast %[[Q]] : tensor<4x8x!quant.uniform<i8:f32, 5.000000e-01:3>> to tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @per_tensor(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<3> : tensor<i8>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A one-element 1-D scale is per-tensor; no zero point is zero point 0; f16 is the expressed type.
// CHECK-LABEL: func.func @per_tensor_one_element_f16
// CHECK: quant.scast %{{.*}} : tensor<4x8xi8> to tensor<4x8x!quant.uniform<i8:f16, 1.250000e-01>>
// CHECK-NEXT: quant.dcast %{{.*}} : tensor<4x8x!quant.uniform<i8:f16, 1.250000e-01>> to tensor<4x8xf16>
func.func @per_tensor_one_element_f16(%x: tensor<4x8xi8>) -> tensor<4x8xf16> {
  %s = arith.constant dense<[0.125]> : tensor<1xf16>
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x8xi8>, tensor<1xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// Unsigned storage: bitcast to signless, `u8`. A per-layer or per-axis type holds its scales as
// f64, so an f32 scale (0.1) is kept exactly with an f16 output. A dynamic dim is fine.
// CHECK-LABEL: func.func @per_axis_u8
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xui8>)
// CHECK: %[[B:.*]] = tensor.bitcast %[[X]] : tensor<?x3xui8> to tensor<?x3xi8>
// CHECK-NEXT: %[[Q:.*]] = quant.scast %[[B]] : tensor<?x3xi8> to tensor<?x3x!quant.uniform<u8:f16:1, {5.000000e-01:128,2.500000e-01,0.10000000149011612:255}>>
// CHECK-NEXT: quant.dcast %[[Q]] : tensor<?x3x!quant.uniform<u8:f16:1, {5.000000e-01:128,2.500000e-01,0.10000000149011612:255}>> to tensor<?x3xf16>
func.func @per_axis_u8(%x: tensor<?x3xui8>) -> tensor<?x3xf16> {
  %s = arith.constant dense<[0.5, 0.25, 0.1]> : tensor<3xf32>
  %z = arith.constant dense<[128, 0, 255]> : tensor<3xui8>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, output_dtype = f16} : (tensor<?x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<?x3xf16>
  return %y : tensor<?x3xf16>
}

// -----

// A negative axis counts from the back.
// CHECK-LABEL: func.func @per_axis_negative_axis_i16
// CHECK: quant.scast %{{.*}} : tensor<2x3x4xi16> to tensor<2x3x4x!quant.uniform<i16:f32:2, {1.000000e+00:-300,2.000000e+00,4.000000e+00:7,8.000000e+00:32767}>>
func.func @per_axis_negative_axis_i16(%x: tensor<2x3x4xi16>) -> tensor<2x3x4xf32> {
  %s = arith.constant dense<[1.0, 2.0, 4.0, 8.0]> : tensor<4xf32>
  %z = arith.constant dense<[-300, 0, 7, 32767]> : tensor<4xi16>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = -1 : i64} : (tensor<2x3x4xi16>, tensor<4xf32>, tensor<4xi16>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Blocked: a sub-channel type, dim 0 in blocks of 1 and the axis in blocks of block_size.
// CHECK-LABEL: func.func @blocked
// CHECK: quant.scast %{{.*}} : tensor<2x8xi8> to tensor<2x8x!quant.uniform<i8:f32:{0:1, 1:4}, {{\{\{}}5.000000e-01:1, 2.500000e-01}, {1.000000e+00:127, 2.000000e+00:3}}>>
// CHECK-NEXT: quant.dcast
func.func @blocked(%x: tensor<2x8xi8>) -> tensor<2x8xf32> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  %z = arith.constant dense<[[1, 0], [127, 3]]> : tensor<2x2xi8>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x8xi8>, tensor<2x2xf32>, tensor<2x2xi8>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// i4 storage, f16 scales held in an f16 sub-channel type.
// CHECK-LABEL: func.func @blocked_i4_f16
// CHECK: quant.scast %{{.*}} : tensor<2x8xi4> to tensor<2x8x!quant.uniform<i4:f16:{0:1, 1:4}, {{\{\{}}5.000000e-01, 2.500000e-01}, {1.000000e+00, 2.000000e+00}}>>
func.func @blocked_i4_f16(%x: tensor<2x8xi4>) -> tensor<2x8xf16> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf16>
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x8xi4>, tensor<2x2xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// One block along the axis: the scale varies along dim 0 only, which is per-axis.
// CHECK-LABEL: func.func @blocked_one_block
// CHECK: quant.scast %{{.*}} : tensor<2x8xi8> to tensor<2x8x!quant.uniform<i8:f32:0, {5.000000e-01:2,2.500000e-01:-2}>>
func.func @blocked_one_block(%x: tensor<2x8xi8>) -> tensor<2x8xf32> {
  %s = arith.constant dense<[[0.5], [0.25]]> : tensor<2x1xf32>
  %z = arith.constant dense<[[2], [-2]]> : tensor<2x1xi8>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 8 : i64} : (tensor<2x8xi8>, tensor<2x1xf32>, tensor<2x1xi8>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A dynamic blocked dim: the sub-channel verifier checks only static dims; upstream's lowering
// reads scale[d floordiv 4] like ours, a ragged last block included.
// CHECK-LABEL: func.func @blocked_dynamic
// CHECK: quant.scast %{{.*}} : tensor<2x?xi8> to tensor<2x?x!quant.uniform<i8:f32:{0:1, 1:4}, {{\{\{}}5.000000e-01, 2.500000e-01}, {1.000000e+00, 2.000000e+00}}>>
func.func @blocked_dynamic(%x: tensor<2x?xi8>) -> tensor<2x?xf32> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x?xi8>, tensor<2x2xf32>) -> tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func.func @i32
// CHECK: quant.scast %{{.*}} : tensor<4xi32> to tensor<4x!quant.uniform<i32:f32, 2.000000e+00>>
func.func @i32(%x: tensor<4xi32>) -> tensor<4xf32> {
  %s = arith.constant dense<2.0> : tensor<f32>
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4xi32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @ui4_bf16
// CHECK: %[[B:.*]] = tensor.bitcast %{{.*}} : tensor<4xui4> to tensor<4xi4>
// CHECK-NEXT: quant.scast %[[B]] : tensor<4xi4> to tensor<4x!quant.uniform<u4:bf16, 2.000000e+00:15>>
func.func @ui4_bf16(%x: tensor<4xui4>) -> tensor<4xbf16> {
  %s = arith.constant dense<2.0> : tensor<bf16>
  %z = arith.constant dense<15> : tensor<ui4>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4xui4>, tensor<bf16>, tensor<ui4>) -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

// A bf16 scale is read exactly (0.03515625, printed 3.515630e-02 as a bf16).
// CHECK-LABEL: func.func @bf16_scale
// CHECK: quant.scast %{{.*}} : tensor<2xi8> to tensor<2x!quant.uniform<i8:bf16:0, {0.03515625,1.000000e+00}>>
func.func @bf16_scale(%x: tensor<2xi8>) -> tensor<2xbf16> {
  %s = arith.constant dense<[0.03515625, 1.0]> : tensor<2xbf16>
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 0 : i64} : (tensor<2xi8>, tensor<2xbf16>) -> tensor<2xbf16>
  return %y : tensor<2xbf16>
}

// -----

// An e8m0 scale is a power of two: an f64 scale like any other (the expressed type is output_dtype).
// CHECK-LABEL: func.func @e8m0_scale
// CHECK: quant.scast %{{.*}} : tensor<4xi8> to tensor<4x!quant.uniform<i8:f32, 1.250000e-01>>
func.func @e8m0_scale(%x: tensor<4xi8>) -> tensor<4xf32> {
  %s = arith.constant dense<0.125> : tensor<f8E8M0FNU>
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = f32} : (tensor<4xi8>, tensor<f8E8M0FNU>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// oneDNN: s32 zps with u8 input, within u8's range.
// CHECK-LABEL: func.func @onednn_per_channel
// CHECK: tensor.bitcast %{{.*}} : tensor<4x3xui8> to tensor<4x3xi8>
// CHECK-NEXT: quant.scast %{{.*}} : tensor<4x3xi8> to tensor<4x3x!quant.uniform<u8:f32:1, {5.000000e-01,2.500000e-01:100,2.000000e+00:255}>>
func.func @onednn_per_channel(%x: tensor<4x3xui8>) -> tensor<4x3xf32> {
  %s = arith.constant dense<[0.5, 0.25, 2.0]> : tensor<3xf32>
  %z = arith.constant dense<[0, 100, 255]> : tensor<3xi32>
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel", axis = -1 : i64} : (tensor<4x3xui8>, tensor<3xf32>, tensor<3xi32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// nGraph: two axes, blocks of 1 on dims 0 and 2 (the scale has one element along dim 1); f64.
// CHECK-LABEL: func.func @ngraph_two_axes
// CHECK: quant.scast %{{.*}} : tensor<2x3x2xi8> to tensor<2x3x2x!quant.uniform<i8:f64:{0:1, 2:1}, {{\{\{\{}}5.000000e-01:1, 2.500000e-01:2}}, {{\{\{}}1.000000e+00:3, 2.000000e+00:4}}}>>
// CHECK-NEXT: quant.dcast %{{.*}} to tensor<2x3x2xf64>
func.func @ngraph_two_axes(%x: tensor<2x3x2xi8>) -> tensor<2x3x2xf64> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf64>
  %z = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f64, axes = array<i64: 0, 2>} : (tensor<2x3x2xi8>, tensor<2x2xf64>, tensor<2x2xi8>) -> tensor<2x3x2xf64>
  return %y : tensor<2x3x2xf64>
}

// -----

// The canonical form: blocks on two dims.
// CHECK-LABEL: func.func @canonical_two_blocks
// CHECK: quant.scast %{{.*}} : tensor<4x8xi8> to tensor<4x8x!quant.uniform<i8:f32:{0:2, 1:4}, {{\{\{}}5.000000e-01, 2.500000e-01}, {1.000000e+00, 2.000000e+00}}>>
func.func @canonical_two_blocks(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  %y = "dq.dequantize"(%x, %s) {scale_map = affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 4)>, zero_point_map = affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 4)>} : (tensor<4x8xi8>, tensor<2x2xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// OpenPPL int8 groups.
// CHECK-LABEL: func.func @pmx_int8_groups
// CHECK: quant.scast %{{.*}} : tensor<2x8xi8> to tensor<2x8x!quant.uniform<i8:f16:{0:1, 1:4}, {{\{\{}}5.000000e-01, 2.500000e-01}, {1.000000e+00, 2.000000e+00}}>>
func.func @pmx_int8_groups(%x: tensor<2x8xi8>) -> tensor<2x8xf16> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf16>
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 4 : i64} : (tensor<2x8xi8>, tensor<2x2xf16>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Left alone: float8 storage.
// KEEP-LABEL: func.func @float8_storage
// KEEP: "dq.onnx_dequantize_linear"
func.func @float8_storage(%x: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  // expected-remark @+1 {{not converted to quant: x is f8E4M3FN: quant.uniform storage types are integers}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4xf8E4M3FN>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// KEEP-LABEL: func.func @float4_storage
// KEEP: "dq.onnx_dequantize_linear"
func.func @float4_storage(%x: tensor<4xf4E2M1FN>) -> tensor<4xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  // expected-remark @+1 {{x is f4E2M1FN: quant.uniform storage types are integers}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4xf4E2M1FN>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// KEEP-LABEL: func.func @scale_not_constant
// KEEP: "dq.onnx_dequantize_linear"
func.func @scale_not_constant(%x: tensor<4xi8>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-remark @+1 {{not converted to quant: x_scale is not an arith.constant dense tensor}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4xi8>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// KEEP-LABEL: func.func @zero_point_not_constant
// KEEP: "dq.onnx_dequantize_linear"
func.func @zero_point_not_constant(%x: tensor<4xi8>, %z: tensor<i8>) -> tensor<4xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  // expected-remark @+1 {{not converted to quant: x_zero_point is not an arith.constant dense tensor}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// quant.uniform scales are positive, from the expressed type's smallest subnormal to its max.
// KEEP-LABEL: func.func @zero_scale
// KEEP: "dq.onnx_dequantize_linear"
func.func @zero_scale(%x: tensor<4xi8>) -> tensor<4xf32> {
  %s = arith.constant dense<0.0> : tensor<f32>
  // expected-remark @+1 {{not converted to quant: x_scale 0 is outside the quant.uniform scale range for the expressed type f32: [1.4013e-45, 3.40282e+38]}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4xi8>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// KEEP-LABEL: func.func @negative_scale
// KEEP: "dq.onnx_dequantize_linear"
func.func @negative_scale(%x: tensor<4x2xi8>) -> tensor<4x2xf32> {
  %s = arith.constant dense<[0.5, -0.5]> : tensor<2xf32>
  // expected-remark @+1 {{x_scale -0.5 is outside the quant.uniform scale range}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64} : (tensor<4x2xi8>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// An f32 scale too small for the f16 expressed type.
// KEEP-LABEL: func.func @scale_below_f16
// KEEP: "dq.onnx_dequantize_linear"
func.func @scale_below_f16(%x: tensor<4xi8>) -> tensor<4xf16> {
  %s = arith.constant dense<1.0e-10> : tensor<f32>
  // expected-remark @+1 {{x_scale 1e-10 is outside the quant.uniform scale range for the expressed type f16: [5.96046e-08, 65504]}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {output_dtype = f16} : (tensor<4xi8>, tensor<f32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// An e8m0 NaN (0xFF) is no scale.
// KEEP-LABEL: func.func @e8m0_nan_scale
// KEEP: "dq.onnx_dequantize_linear"
func.func @e8m0_nan_scale(%x: tensor<2x2xi8>) -> tensor<2x2xf32> {
  %s = arith.constant dense<[0.5, 0xFF]> : tensor<2xf8E8M0FNU>
  // expected-remark @+1 {{is outside the quant.uniform scale range for the expressed type f32}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, output_dtype = f32} : (tensor<2x2xi8>, tensor<2xf8E8M0FNU>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// ONNX's ragged last block (7 = 4 + 3) has no sub-channel form: blocks must tile a static dim.
// KEEP-LABEL: func.func @ragged_blocks
// KEEP: "dq.onnx_dequantize_linear"
func.func @ragged_blocks(%x: tensor<2x7xi8>) -> tensor<2x7xf32> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{not converted to quant: ragged blocks: dim 1 has 7 elements, not 2 blocks of 4; quant.uniform sub-channel blocks must tile the dim}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x7xi8>, tensor<2x2xf32>) -> tensor<2x7xf32>
  return %y : tensor<2x7xf32>
}

// -----

// A sub-channel type holds its zero points in the signless storage type and prints them signed;
// MLIR's quant parser asserts on a negative one, so such a type would not survive printing.
// KEEP-LABEL: func.func @sub_channel_negative_zero_point
// KEEP: "dq.onnx_dequantize_linear"
func.func @sub_channel_negative_zero_point(%x: tensor<2x8xi4>) -> tensor<2x8xf32> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  %z = arith.constant dense<[[1, -1], [0, 7]]> : tensor<2x2xi4>
  // expected-remark @+1 {{not converted to quant: the sub-channel zero point -1 prints as -1, and MLIR's quant parser asserts on negative sub-channel zero points}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x8xi4>, tensor<2x2xf32>, tensor<2x2xi4>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// KEEP-LABEL: func.func @sub_channel_u8_zero_point_above_127
// KEEP: "dq.onnx_dequantize_linear"
func.func @sub_channel_u8_zero_point_above_127(%x: tensor<2x8xui8>) -> tensor<2x8xf32> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  %z = arith.constant dense<[[1, 200], [0, 7]]> : tensor<2x2xui8>
  // expected-remark @+1 {{the sub-channel zero point 200 prints as -56}}
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x8xui8>, tensor<2x2xf32>, tensor<2x2xui8>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A sub-channel type holds its scales in the expressed type: f32 0.1 is no f16.
// KEEP-LABEL: func.func @sub_channel_scale_not_expressed
// KEEP: "dq.onnx_dequantize_linear"
func.func @sub_channel_scale_not_expressed(%x: tensor<2x8xi8>) -> tensor<2x8xf16> {
  %s = arith.constant dense<[[0.5, 0.1], [1.0, 2.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{x_scale 0.10000000149011612 is not exactly representable in f16: a sub-channel quant.uniform holds its scales in the expressed type}}
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 4 : i64, output_dtype = f16} : (tensor<2x8xi8>, tensor<2x2xf32>) -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// KEEP-LABEL: func.func @zero_point_outside_storage
// KEEP: "dq.onednn_dynamic_dequantize"
func.func @zero_point_outside_storage(%x: tensor<4xui8>) -> tensor<4xf32> {
  %s = arith.constant dense<[0.5]> : tensor<1xf32>
  %z = arith.constant dense<[300]> : tensor<1xi32>
  // expected-remark @+1 {{not converted to quant: zps 300 is outside the storage range [0, 255] of ui8}}
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) : (tensor<4xui8>, tensor<1xf32>, tensor<1xi32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// KEEP-LABEL: func.func @pmx_int4_packed
// KEEP: "dq.pmx_dequantize_linear"
func.func @pmx_int4_packed(%x: tensor<2x256xi16>) -> tensor<8x256xf16> {
  %s = arith.constant dense<0.5> : tensor<8x2xf16>
  // expected-remark @+1 {{not converted to quant: packed int4x4 storage has no quant.uniform storage type}}
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4"} : (tensor<2x256xi16>, tensor<8x2xf16>) -> tensor<8x256xf16>
  return %y : tensor<8x256xf16>
}

// -----

// KEEP-LABEL: func.func @pmx_float_zero_point
// KEEP: "dq.pmx_dequantize_linear"
func.func @pmx_float_zero_point(%x: tensor<4x256xi8>) -> tensor<4x256xf16> {
  %s = arith.constant dense<0.5> : tensor<4x2xf16>
  %z = arith.constant dense<1.5> : tensor<4x2xf16>
  // expected-remark @+1 {{not converted to quant: a zero point added after scaling is not a quant.uniform zero point}}
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", has_zeropoint = true, float_zeropoint = true} : (tensor<4x256xi8>, tensor<4x2xf16>, tensor<4x2xf16>) -> tensor<4x256xf16>
  return %y : tensor<4x256xf16>
}
