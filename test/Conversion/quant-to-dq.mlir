// RUN: dequant-opt %s --split-input-file --quant-to-dq | FileCheck %s
// RUN: dequant-opt %s --split-input-file --quant-to-dq --verify-diagnostics
// RUN: dequant-opt %s --split-input-file --quant-to-dq --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=KEEP
// RUN: dequant-opt %s --split-input-file --dq-to-quant --quant-to-dq | FileCheck %s --check-prefix=ROUNDTRIP

// quant-to-dq: quant.dcast of a !quant.uniform tensor becomes dq.onnx_dequantize_linear (per-layer:
// scalar scale; per-axis: `axis`; sub-channel with one blocked axis: `axis`, `block_size`) or, where
// ONNX cannot say it, the canonical dq.dequantize, with arith.constant scale and zero point. x is
// the tensor the quant.scast came from (unsigned: behind its tensor.bitcast), else a new
// quant.scast to the storage type. Scales have the expressed type where it holds them exactly,
// else f32; zero points have x's type and are left out when all zero.
//
// A dcast without a dq form is left as is, with a remark (second RUN line; the third reads the IR
// after the pass, as dequant-opt prints no module for a chunk with diagnostics). The last RUN line
// round-trips dq ops through the quant form (ROUNDTRIP chunks at the end).

// CHECK-LABEL: func.func @per_layer
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xi8>)
// CHECK-DAG: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<3> : tensor<i8>
// CHECK-NOT: quant.
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[X]], %[[S]], %[[Z]]) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @per_layer(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %q = quant.scast %x : tensor<4x8xi8> to tensor<4x8x!quant.uniform<i8:f32, 0.5:3>>
  %y = quant.dcast %q : tensor<4x8x!quant.uniform<i8:f32, 0.5:3>> to tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A quantized tensor not made by quant.scast: scast to its storage, bitcast to unsigned.
// CHECK-LABEL: func.func @quantized_argument
// CHECK-SAME: (%[[Q:.*]]: tensor<4x!quant.uniform<u8:f32, 5.000000e-01:200>>)
// CHECK-DAG: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<200> : tensor<ui8>
// CHECK: %[[I:.*]] = quant.scast %[[Q]] : tensor<4x!quant.uniform<u8:f32, 5.000000e-01:200>> to tensor<4xi8>
// CHECK-NEXT: %[[U:.*]] = tensor.bitcast %[[I]] : tensor<4xi8> to tensor<4xui8>
// CHECK-NEXT: "dq.onnx_dequantize_linear"(%[[U]], %[[S]], %[[Z]]) : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
func.func @quantized_argument(%q: tensor<4x!quant.uniform<u8:f32, 0.5:200>>) -> tensor<4xf32> {
  %y = quant.dcast %q : tensor<4x!quant.uniform<u8:f32, 0.5:200>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The unsigned tensor behind the bitcast dq-to-quant makes is x again.
// CHECK-LABEL: func.func @per_axis_unsigned_bitcast
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xui8>)
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01, 2.000000e+00]> : tensor<3xf32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<[128, 0, 255]> : tensor<3xui8>
// CHECK-NOT: bitcast
// CHECK: "dq.onnx_dequantize_linear"(%[[X]], %[[S]], %[[Z]]) {axis = 1 : i64} : (tensor<?x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<?x3xf32>
func.func @per_axis_unsigned_bitcast(%x: tensor<?x3xui8>) -> tensor<?x3xf32> {
  %b = tensor.bitcast %x : tensor<?x3xui8> to tensor<?x3xi8>
  %q = quant.scast %b : tensor<?x3xi8> to tensor<?x3x!quant.uniform<u8:f32:1, {0.5:128, 0.25, 2.0:255}>>
  %y = quant.dcast %q : tensor<?x3x!quant.uniform<u8:f32:1, {0.5:128, 0.25, 2.0:255}>> to tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// CHECK-LABEL: func.func @per_axis_unsigned_signless
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xi8>)
// CHECK: %[[U:.*]] = tensor.bitcast %[[X]] : tensor<4x3xi8> to tensor<4x3xui8>
// CHECK-NEXT: "dq.onnx_dequantize_linear"(%[[U]], %{{.*}}, %{{.*}}) {axis = 1 : i64} : (tensor<4x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<4x3xf32>
func.func @per_axis_unsigned_signless(%x: tensor<4x3xi8>) -> tensor<4x3xf32> {
  %q = quant.scast %x : tensor<4x3xi8> to tensor<4x3x!quant.uniform<u8:f32:1, {0.5:128, 0.25, 2.0:255}>>
  %y = quant.dcast %q : tensor<4x3x!quant.uniform<u8:f32:1, {0.5:128, 0.25, 2.0:255}>> to tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Scales f16 cannot hold exactly (0.1) are f32, with output_dtype the expressed type.
// CHECK-LABEL: func.func @per_axis_f16_f32_scale
// CHECK-DAG: arith.constant dense<[1.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 1 : i64, output_dtype = f16} : (tensor<4x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<4x2xf16>
func.func @per_axis_f16_f32_scale(%x: tensor<4x2xi8>) -> tensor<4x2xf16> {
  %q = quant.scast %x : tensor<4x2xi8> to tensor<4x2x!quant.uniform<i8:f16:1, {0.1:3, 0.25:1}>>
  %y = quant.dcast %q : tensor<4x2x!quant.uniform<i8:f16:1, {0.1:3, 0.25:1}>> to tensor<4x2xf16>
  return %y : tensor<4x2xf16>
}

// -----

// One blocked axis, blocks of 1 elsewhere: ONNX blocked. Scales in the type's bf16.
// CHECK-LABEL: func.func @sub_channel_one_axis
// CHECK-DAG: arith.constant dense<{{\[\[}}5.000000e-01, 2.500000e-01], [1.000000e+00, 3.515630e-02]]> : tensor<2x2xbf16>
// CHECK-DAG: arith.constant dense<{{\[\[}}1, 0], [7, 3]]> : tensor<2x2xi4>
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x8xi4>, tensor<2x2xbf16>, tensor<2x2xi4>) -> tensor<2x8xbf16>
func.func @sub_channel_one_axis(%x: tensor<2x8xi4>) -> tensor<2x8xbf16> {
  %q = quant.scast %x : tensor<2x8xi4> to tensor<2x8x!quant.uniform<i4:bf16:{0:1, 1:4}, {{0.5:1, 0.25}, {1.0:7, 0.03515625:3}}>>
  %y = quant.dcast %q : tensor<2x8x!quant.uniform<i4:bf16:{0:1, 1:4}, {{0.5:1, 0.25}, {1.0:7, 0.03515625:3}}>> to tensor<2x8xbf16>
  return %y : tensor<2x8xbf16>
}

// -----

// CHECK-LABEL: func.func @sub_channel_blocks_of_one
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 1 : i64, block_size = 1 : i64} : (tensor<2x2xi8>, tensor<2x2xf32>, tensor<2x2xi8>) -> tensor<2x2xf32>
func.func @sub_channel_blocks_of_one(%x: tensor<2x2xi8>) -> tensor<2x2xf32> {
  %q = quant.scast %x : tensor<2x2xi8> to tensor<2x2x!quant.uniform<i8:f32:{0:1, 1:1}, {{0.5:1, 0.25}, {1.0:7, 2.0:3}}>>
  %y = quant.dcast %q : tensor<2x2x!quant.uniform<i8:f32:{0:1, 1:1}, {{0.5:1, 0.25}, {1.0:7, 2.0:3}}>> to tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Blocks along two axes: the canonical dq.dequantize.
// CHECK-DAG: #[[MAP:.*]] = affine_map<(d0, d1) -> (d0 floordiv 2, d1 floordiv 4)>
// CHECK-LABEL: func.func @sub_channel_two_axes
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[MAP]], unpack = "none", zero_point_map = #[[MAP]], zero_point_mode = "subtract"} : (tensor<4x8xi8>, tensor<2x2xf32>, tensor<2x2xi8>) -> tensor<4x8xf32>
func.func @sub_channel_two_axes(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %q = quant.scast %x : tensor<4x8xi8> to tensor<4x8x!quant.uniform<i8:f32:{0:2, 1:4}, {{0.5:1, 0.25}, {1.0:7, 2.0:3}}>>
  %y = quant.dcast %q : tensor<4x8x!quant.uniform<i8:f32:{0:2, 1:4}, {{0.5:1, 0.25}, {1.0:7, 2.0:3}}>> to tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A dim the type leaves out has one scale along it: read at index 0.
// CHECK-DAG: #[[MAP:.*]] = affine_map<(d0, d1) -> (0, d1 floordiv 2)>
// CHECK-LABEL: func.func @sub_channel_dim_left_out
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[MAP]], unpack = "none", zero_point_map = #[[MAP]], zero_point_mode = "subtract"} : (tensor<3x4xi8>, tensor<1x2xf32>, tensor<1x2xi8>) -> tensor<3x4xf32>
func.func @sub_channel_dim_left_out(%x: tensor<3x4xi8>) -> tensor<3x4xf32> {
  %q = quant.scast %x : tensor<3x4xi8> to tensor<3x4x!quant.uniform<i8:f32:{1:2}, {{0.5:3, 0.25:1}}>>
  %y = quant.dcast %q : tensor<3x4x!quant.uniform<i8:f32:{1:2}, {{0.5:3, 0.25:1}}>> to tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @sub_channel_unit_dim_left_out
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 1 : i64, block_size = 2 : i64} : (tensor<1x4xi8>, tensor<1x2xf32>, tensor<1x2xi8>) -> tensor<1x4xf32>
func.func @sub_channel_unit_dim_left_out(%x: tensor<1x4xi8>) -> tensor<1x4xf32> {
  %q = quant.scast %x : tensor<1x4xi8> to tensor<1x4x!quant.uniform<i8:f32:{1:2}, {{0.5:3, 0.25:1}}>>
  %y = quant.dcast %q : tensor<1x4x!quant.uniform<i8:f32:{1:2}, {{0.5:3, 0.25:1}}>> to tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// An f64 expressed type is no ONNX output type: dq.dequantize with an f64 scale.
// CHECK-DAG: #[[MAP:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @f64
// CHECK-DAG: arith.constant dense<1.000000e-01> : tensor<f64>
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[MAP]], unpack = "none", zero_point_map = #[[MAP]], zero_point_mode = "subtract"} : (tensor<4xi8>, tensor<f64>, tensor<i8>) -> tensor<4xf64>
func.func @f64(%x: tensor<4xi8>) -> tensor<4xf64> {
  %q = quant.scast %x : tensor<4xi8> to tensor<4x!quant.uniform<i8:f64, 0.1:-3>>
  %y = quant.dcast %q : tensor<4x!quant.uniform<i8:f64, 0.1:-3>> to tensor<4xf64>
  return %y : tensor<4xf64>
}

// -----

// ONNX int32 has no zero point: dq.dequantize.
// CHECK-LABEL: func.func @i32_zero_point
// CHECK: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} : (tensor<4xi32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
func.func @i32_zero_point(%x: tensor<4xi32>) -> tensor<4xf32> {
  %q = quant.scast %x : tensor<4xi32> to tensor<4x!quant.uniform<i32:f32, 0.5:-7>>
  %y = quant.dcast %q : tensor<4x!quant.uniform<i32:f32, 0.5:-7>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The storage range bounds quantization only: dropped.
// CHECK-LABEL: func.func @narrow_range
// CHECK-DAG: arith.constant dense<-2> : tensor<i8>
// CHECK: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4xi8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
func.func @narrow_range(%x: tensor<4xi8>) -> tensor<4xf32> {
  %q = quant.scast %x : tensor<4xi8> to tensor<4x!quant.uniform<i8<-8:7>:f32, 0.5:-2>>
  %y = quant.dcast %q : tensor<4x!quant.uniform<i8<-8:7>:f32, 0.5:-2>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Zero point 0: no zero point operand.
// CHECK-LABEL: func.func @u16_bf16
// CHECK: %[[U:.*]] = tensor.bitcast %{{.*}} : tensor<4xi16> to tensor<4xui16>
// CHECK-NEXT: "dq.onnx_dequantize_linear"(%[[U]], %{{.*}}) : (tensor<4xui16>, tensor<bf16>) -> tensor<4xbf16>
func.func @u16_bf16(%x: tensor<4xi16>) -> tensor<4xbf16> {
  %q = quant.scast %x : tensor<4xi16> to tensor<4x!quant.uniform<u16:bf16, 3.0>>
  %y = quant.dcast %q : tensor<4x!quant.uniform<u16:bf16, 3.0>> to tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

// KEEP-LABEL: func.func @u32_storage
// KEEP: quant.dcast
func.func @u32_storage(%x: tensor<4xi32>) -> tensor<4xf32> {
  %q = quant.scast %x : tensor<4xi32> to tensor<4x!quant.uniform<u32:f32, 0.5:7>>
  // expected-remark @+1 {{not converted to dq: the dq dialect has no storage type for u32}}
  %y = quant.dcast %q : tensor<4x!quant.uniform<u32:f32, 0.5:7>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The quant parser accepts a zero point outside the storage range; upstream's lowering wraps it
// (300 -> 44 as i8), ONNX's zero point has x's type.
// KEEP-LABEL: func.func @zero_point_outside_storage
// KEEP: quant.dcast
func.func @zero_point_outside_storage(%x: tensor<4xi8>) -> tensor<4xf32> {
  %q = quant.scast %x : tensor<4xi8> to tensor<4x!quant.uniform<i8:f32, 0.5:300>>
  // expected-remark @+1 {{not converted to dq: zero point 300 is outside the storage range [-128, 127] of i8}}
  %y = quant.dcast %q : tensor<4x!quant.uniform<i8:f32, 0.5:300>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// KEEP-LABEL: func.func @scalar
// KEEP: quant.dcast
func.func @scalar(%x: i8) -> f32 {
  %q = quant.scast %x : i8 to !quant.uniform<i8:f32, 0.5:3>
  // expected-remark @+1 {{not converted to dq: dq ops take ranked tensors}}
  %y = quant.dcast %q : !quant.uniform<i8:f32, 0.5:3> to f32
  return %y : f32
}

// -----

// KEEP-LABEL: func.func @unranked
// KEEP: quant.dcast
func.func @unranked(%q: tensor<*x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<*xf32> {
  // expected-remark @+1 {{not converted to dq: dq ops take ranked tensors}}
  %y = quant.dcast %q : tensor<*x!quant.uniform<i8:f32, 0.5:3>> to tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

// KEEP-LABEL: func.func @not_uniform
// KEEP: quant.dcast
func.func @not_uniform(%q: tensor<4x!quant.any<i8:f32>>) -> tensor<4xf32> {
  // expected-remark @+1 {{not converted to dq: !quant.any<i8:f32> is not a !quant.uniform type}}
  %y = quant.dcast %q : tensor<4x!quant.any<i8:f32>> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Round trips: dq op -> quant.scast + quant.dcast -> the dq op (its scale and zero point again).
// ROUNDTRIP-LABEL: func.func @round_trip_per_tensor
// ROUNDTRIP-SAME: (%[[X:.*]]: tensor<4x8xi8>)
// ROUNDTRIP-DAG: %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// ROUNDTRIP-DAG: %[[Z:.*]] = arith.constant dense<-3> : tensor<i8>
// ROUNDTRIP-NOT: quant.
// ROUNDTRIP: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[X]], %[[S]], %[[Z]]) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
// ROUNDTRIP-NEXT: return %[[Y]]
func.func @round_trip_per_tensor(%x: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %s = arith.constant dense<0.5> : tensor<f32>
  %z = arith.constant dense<-3> : tensor<i8>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Unsigned: the two bitcasts cancel. f32 scales with an f16 output stay f32 (0.1).
// ROUNDTRIP-LABEL: func.func @round_trip_per_axis_unsigned
// ROUNDTRIP-SAME: (%[[X:.*]]: tensor<?x3xui8>)
// ROUNDTRIP-DAG: %[[S:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01, 1.000000e-01]> : tensor<3xf32>
// ROUNDTRIP-DAG: %[[Z:.*]] = arith.constant dense<[128, 0, 255]> : tensor<3xui8>
// ROUNDTRIP-NOT: bitcast
// ROUNDTRIP: "dq.onnx_dequantize_linear"(%[[X]], %[[S]], %[[Z]]) {axis = 1 : i64, output_dtype = f16} : (tensor<?x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<?x3xf16>
func.func @round_trip_per_axis_unsigned(%x: tensor<?x3xui8>) -> tensor<?x3xf16> {
  %s = arith.constant dense<[0.5, 0.25, 0.1]> : tensor<3xf32>
  %z = arith.constant dense<[128, 0, 255]> : tensor<3xui8>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, output_dtype = f16} : (tensor<?x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<?x3xf16>
  return %y : tensor<?x3xf16>
}

// -----

// ROUNDTRIP-LABEL: func.func @round_trip_blocked
// ROUNDTRIP-DAG: arith.constant dense<{{\[\[}}5.000000e-01, 2.500000e-01], [1.000000e+00, 2.000000e+00]]> : tensor<2x2xf32>
// ROUNDTRIP-DAG: arith.constant dense<{{\[\[}}1, 0], [127, 3]]> : tensor<2x2xi8>
// ROUNDTRIP: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x8xi8>, tensor<2x2xf32>, tensor<2x2xi8>) -> tensor<2x8xf32>
func.func @round_trip_blocked(%x: tensor<2x8xi8>) -> tensor<2x8xf32> {
  %s = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf32>
  %z = arith.constant dense<[[1, 0], [127, 3]]> : tensor<2x2xi8>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x8xi8>, tensor<2x2xf32>, tensor<2x2xi8>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// ROUNDTRIP-LABEL: func.func @round_trip_ui4_bf16
// ROUNDTRIP-SAME: (%[[X:.*]]: tensor<4xui4>)
// ROUNDTRIP: "dq.onnx_dequantize_linear"(%[[X]], %{{.*}}, %{{.*}}) : (tensor<4xui4>, tensor<bf16>, tensor<ui4>) -> tensor<4xbf16>
func.func @round_trip_ui4_bf16(%x: tensor<4xui4>) -> tensor<4xbf16> {
  %s = arith.constant dense<2.0> : tensor<bf16>
  %z = arith.constant dense<15> : tensor<ui4>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) : (tensor<4xui4>, tensor<bf16>, tensor<ui4>) -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

// Spec ops come back as the ONNX op when it can say them, else as dq.dequantize.
// ROUNDTRIP-DAG: #[[MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// ROUNDTRIP-LABEL: func.func @round_trip_other_ops
// ROUNDTRIP: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}) {axis = 1 : i64, block_size = 4 : i64} : (tensor<2x8xi8>, tensor<2x2xf16>) -> tensor<2x8xf16>
// ROUNDTRIP: "dq.onnx_dequantize_linear"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 1 : i64} : (tensor<4x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<4x3xf32>
// ROUNDTRIP: "dq.dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {scale_map = #[[MAP]], {{.*}}} : (tensor<2x3x2xi8>, tensor<2x1x2xf64>, tensor<2x1x2xi8>) -> tensor<2x3x2xf64>
func.func @round_trip_other_ops(%a: tensor<2x8xi8>, %b: tensor<4x3xui8>, %c: tensor<2x3x2xi8>) -> (tensor<2x8xf16>, tensor<4x3xf32>, tensor<2x3x2xf64>) {
  %sa = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf16>
  %ya = "dq.pmx_dequantize_linear"(%a, %sa) {quant_data_type = "int8", group_size = 4 : i64} : (tensor<2x8xi8>, tensor<2x2xf16>) -> tensor<2x8xf16>
  %sb = arith.constant dense<[0.5, 0.25, 2.0]> : tensor<3xf32>
  %zb = arith.constant dense<[0, 100, 255]> : tensor<3xi32>
  %yb = "dq.onednn_dynamic_dequantize"(%b, %sb, %zb) {qtype = "per_channel", axis = -1 : i64} : (tensor<4x3xui8>, tensor<3xf32>, tensor<3xi32>) -> tensor<4x3xf32>
  %sc = arith.constant dense<[[0.5, 0.25], [1.0, 2.0]]> : tensor<2x2xf64>
  %zc = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %yc = "dq.ngraph_dequantize"(%c, %sc, %zc) {type = f64, axes = array<i64: 0, 2>} : (tensor<2x3x2xi8>, tensor<2x2xf64>, tensor<2x2xi8>) -> tensor<2x3x2xf64>
  return %ya, %yb, %yc : tensor<2x8xf16>, tensor<4x3xf32>, tensor<2x3x2xf64>
}
