// RUN: dequant-opt %s --dq-to-linalg --split-input-file | FileCheck %s

// dq.pmx_dequantize_linear lowers to one linalg.generic. Scale and ZeroPoint are read through
// the granularity's map: groups along quant_axis `d<axis> floordiv group_size`, per-tensor the
// constant 0 per Scale dim (`-> ()` for a scalar), per-channel `(d0, 0, ...)` or `(d0)`.
//   no zero point:       Y = Scale * q
//   integer zero point:  Y = Scale * (x - zp)         (exact i32 subtraction)
//   float_zeropoint:     Y = Scale * q + zp           (mulf, then addf)
// int8: q = x. int4: X (i16) is read through `(d0 floordiv 4, d1)`; nibble k = d0 mod 4
// (bits 4k..4k+3, unsigned) of X[d0 / 4, ...] is output row d0, and q = nibble - 8, or
// nibble - (zp & 15) with an integer zero point. f16 outputs are computed in f32, rounded once.

// ---- int8

// Groups of 128 (default) along axis 1 (default), integer zero point.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[GRP:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
// CHECK-LABEL: func.func @int8_group_axis1_int_zero_point(
// CHECK-SAME: %[[X:.*]]: tensor<4x256xi8>, %[[S:.*]]: tensor<4x2xf32>, %[[Z:.*]]: tensor<4x2xi8>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x256xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[GRP]], #[[GRP]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[S]], %[[Z]] : tensor<4x256xi8>, tensor<4x2xf32>, tensor<4x2xi8>) outs(%[[INIT]] : tensor<4x256xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extsi %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[Y]] : tensor<4x256xf32>
func.func @int8_group_axis1_int_zero_point(%x: tensor<4x256xi8>, %s: tensor<4x2xf32>, %z: tensor<4x2xi8>) -> tensor<4x256xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", has_zeropoint = true} : (tensor<4x256xi8>, tensor<4x2xf32>, tensor<4x2xi8>) -> tensor<4x256xf32>
  return %y : tensor<4x256xf32>
}

// -----

// Groups of 2 along axis 0, no zero point, f16.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[GRP:map[0-9]*]] = affine_map<(d0, d1) -> (d0 floordiv 2, d1)>
// CHECK-LABEL: func.func @int8_group_axis0_f16(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[GRP]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[A]] : i32 to f32
// CHECK-NEXT: %[[SC32:.*]] = arith.extf %[[SC]] : f16 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC32]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[T]] : f16
func.func @int8_group_axis0_f16(%x: tensor<8x16xi8>, %s: tensor<4x16xf16>) -> tensor<8x16xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", quant_axis = 0 : i64, group_size = 2 : i64} : (tensor<8x16xi8>, tensor<4x16xf16>) -> tensor<8x16xf16>
  return %y : tensor<8x16xf16>
}

// -----

// Float zero point (f16, with an f16 Scale): Scale * q + zp, added after the product, in f32.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[GRP:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 4)>
// CHECK-LABEL: func.func @int8_group_float_zero_point(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[GRP]], #[[GRP]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f16, %[[ZP:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[A]] : i32 to f32
// CHECK-NEXT: %[[SC32:.*]] = arith.extf %[[SC]] : f16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[F]], %[[SC32]] : f32
// CHECK-NEXT: %[[ZP32:.*]] = arith.extf %[[ZP]] : f16 to f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[M]], %[[ZP32]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[T]] : f16
func.func @int8_group_float_zero_point(%x: tensor<2x16xi8>, %s: tensor<2x4xf16>, %z: tensor<2x4xf16>) -> tensor<2x16xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 4 : i64, has_zeropoint = true, float_zeropoint = true} : (tensor<2x16xi8>, tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<2x16xf16>
  return %y : tensor<2x16xf16>
}

// -----

// Per tensor, scalar Scale.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PT:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @int8_per_tensor_scalar(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PT]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[A]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @int8_per_tensor_scalar(%x: tensor<4x16xi8>, %s: tensor<f32>) -> tensor<4x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", group_size = 0 : i64} : (tensor<4x16xi8>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Per tensor, Scale (1) with an integer zero point (1).
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PT:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @int8_per_tensor_one(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PT]], #[[PT]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extsi %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
func.func @int8_per_tensor_one(%x: tensor<4x16xi8>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> tensor<4x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true} : (tensor<4x16xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Per tensor, all-ones Scale (1, 1), float zero point (f32).
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PT:map[0-9]*]] = affine_map<(d0, d1) -> (0, 0)>
// CHECK-LABEL: func.func @int8_per_tensor_all_ones_float_zero_point(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PT]], #[[PT]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[A]] : i32 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[M]], %[[ZP]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @int8_per_tensor_all_ones_float_zero_point(%x: tensor<4x16xi8>, %s: tensor<1x1xf32>, %z: tensor<1x1xf32>) -> tensor<4x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true, float_zeropoint = true} : (tensor<4x16xi8>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Per channel, Scale (d0, 1) as the spec writes it.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PC:map[0-9]*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @int8_per_channel_d0_1(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PC]], #[[PC]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extsi %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @int8_per_channel_d0_1(%x: tensor<4x16xi8>, %s: tensor<4x1xf32>, %z: tensor<4x1xi8>) -> tensor<4x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int8", group_size = 0 : i64, has_zeropoint = true} : (tensor<4x16xi8>, tensor<4x1xf32>, tensor<4x1xi8>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Per channel, Scale (d0); quant_axis plays no part without groups.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PC:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @int8_per_channel_rank1_scale(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PC]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
func.func @int8_per_channel_rank1_scale(%x: tensor<4x16xi8>, %s: tensor<4xf32>) -> tensor<4x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int8", quant_axis = 0 : i64, group_size = 0 : i64} : (tensor<4x16xi8>, tensor<4xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// ---- int4 (int4x4 packed along dim 0)
// The output is iterated as [X rows, 4, ...], an expanded view of it: d0 is X's row, d1 the
// nibble (bits 4*d1.. of X[d0, ...]), so output row 4*d0 + d1; the nibble's shift is invariant in
// the inner loops. A Scale read along dim 0 per row is viewed as [rows / 4, 4] and read at
// (d0, d1): row 4*d0 + d1 (groups of G rows with 4 | G read d0 floordiv (G/4)).

// Groups of 128 along axis 1 of the unpacked 8x256 output, no zero point: nibble - 8.
// CHECK-DAG: #[[XM:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[GRP:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2 floordiv 128)>
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @int4_group_axis1(
// CHECK-SAME: %[[X:.*]]: tensor<2x256xi16>, %[[S:.*]]: tensor<8x2xf16>)
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i32
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : i32
// CHECK-DAG: %[[C4I:.*]] = arith.constant 4 : i32
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<8x256xf16>
// CHECK: %[[VIEW:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0, 1], [2]] output_shape [2, 4, 256] : tensor<8x256xf16> into tensor<2x4x256xf16>
// CHECK: %[[SV:.*]] = tensor.expand_shape %[[S]] {{\[}}[0, 1], [2]] output_shape [2, 4, 2] : tensor<8x2xf16> into tensor<2x4x2xf16>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[XM]], #[[GRP]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[SV]] : tensor<2x256xi16>, tensor<2x4x2xf16>) outs(%[[VIEW]] : tensor<2x4x256xf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i16, %[[SC:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[K:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]] : index to i32
// CHECK-NEXT: %[[SH:.*]] = arith.muli %[[KI]], %[[C4I]] : i32
// CHECK-NEXT: %[[W:.*]] = arith.extui %[[IN]] : i16 to i32
// CHECK-NEXT: %[[SR:.*]] = arith.shrui %[[W]], %[[SH]] : i32
// CHECK-NEXT: %[[NIB:.*]] = arith.andi %[[SR]], %[[C15]] {dq.field_code = 4 : i32} : i32
// CHECK-NEXT: %[[Q:.*]] = arith.subi %[[NIB]], %[[C8]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[Q]] : i32 to f32
// CHECK-NEXT: %[[SC32:.*]] = arith.extf %[[SC]] : f16 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC32]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[T]] : f16
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : tensor<2x4x256xf16> into tensor<8x256xf16>
// CHECK-NEXT: return %[[OUT]]
func.func @int4_group_axis1(%x: tensor<2x256xi16>, %s: tensor<8x2xf16>) -> tensor<8x256xf16> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4"} : (tensor<2x256xi16>, tensor<8x2xf16>) -> tensor<8x256xf16>
  return %y : tensor<8x256xf16>
}

// -----

// Groups of 8 unpacked rows (axis 0) are groups of 2 X rows; integer zero point: nibble -
// (zp & 15); a dynamic packed dim 0 gives the output 4 * dim(X, 0) rows.
// CHECK-DAG: #[[XM:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[GRP:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0 floordiv 2, d2)>
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @int4_group_axis0_int_zero_point_dynamic(
// CHECK-SAME: %[[X:.*]]: tensor<?x16xi16>,
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : i32
// CHECK-DAG: %[[C4I:.*]] = arith.constant 4 : i32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[DIM:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x16xi16>
// CHECK: %[[ROWS:.*]] = arith.muli %[[DIM]], %{{.*}} : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[ROWS]]) : tensor<?x16xf32>
// CHECK: %[[VIEW:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0, 1], [2]] output_shape [%{{.*}}, 4, 16] : tensor<?x16xf32> into tensor<?x4x16xf32>
// CHECK: linalg.generic {indexing_maps = [#[[XM]], #[[GRP]], #[[GRP]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: outs(%[[VIEW]] : tensor<?x4x16xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i16, %[[SC:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: f32):
// CHECK-NEXT: %[[K:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]] : index to i32
// CHECK-NEXT: %[[SH:.*]] = arith.muli %[[KI]], %[[C4I]] : i32
// CHECK-NEXT: %[[W:.*]] = arith.extui %[[IN]] : i16 to i32
// CHECK-NEXT: %[[SR:.*]] = arith.shrui %[[W]], %[[SH]] : i32
// CHECK-NEXT: %[[NIB:.*]] = arith.andi %[[SR]], %[[C15]] {dq.field_code = 4 : i32} : i32
// CHECK-NEXT: %[[ZW:.*]] = arith.extsi %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[ZN:.*]] = arith.andi %[[ZW]], %[[C15]] : i32
// CHECK-NEXT: %[[Q:.*]] = arith.subi %[[NIB]], %[[ZN]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[Q]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @int4_group_axis0_int_zero_point_dynamic(%x: tensor<?x16xi16>, %s: tensor<?x16xf32>, %z: tensor<?x16xi8>) -> tensor<?x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int4", quant_axis = 0 : i64, group_size = 8 : i64, has_zeropoint = true} : (tensor<?x16xi16>, tensor<?x16xf32>, tensor<?x16xi8>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// Per channel over the 8 unpacked rows (row 4*d0 + d1: Scale and zp viewed as [2, 4]), float
// zero point (f16 with an f32 Scale): (nibble - 8) * Scale + zp.
// CHECK-DAG: #[[XM:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[PC:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @int4_per_channel_float_zero_point(
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i32
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : i32
// CHECK-DAG: %[[C4I:.*]] = arith.constant 4 : i32
// CHECK: linalg.generic {indexing_maps = [#[[XM]], #[[PC]], #[[PC]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i16, %[[SC:.*]]: f32, %[[ZP:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT: %[[K:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]] : index to i32
// CHECK-NEXT: %[[SH:.*]] = arith.muli %[[KI]], %[[C4I]] : i32
// CHECK-NEXT: %[[W:.*]] = arith.extui %[[IN]] : i16 to i32
// CHECK-NEXT: %[[SR:.*]] = arith.shrui %[[W]], %[[SH]] : i32
// CHECK-NEXT: %[[NIB:.*]] = arith.andi %[[SR]], %[[C15]] {dq.field_code = 4 : i32} : i32
// CHECK-NEXT: %[[Q:.*]] = arith.subi %[[NIB]], %[[C8]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[Q]] : i32 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: %[[ZP32:.*]] = arith.extf %[[ZP]] : f16 to f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[M]], %[[ZP32]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @int4_per_channel_float_zero_point(%x: tensor<2x16xi16>, %s: tensor<8xf32>, %z: tensor<8xf16>) -> tensor<8x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s, %z) {quant_data_type = "int4", group_size = 0 : i64, has_zeropoint = true, float_zeropoint = true} : (tensor<2x16xi16>, tensor<8xf32>, tensor<8xf16>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// Per tensor, rank 3: X is read through `(d0, d2, d3)`, the Scale through `-> ()`.
// CHECK-DAG: #[[XM:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[PT:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @int4_per_tensor_rank3(
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3]] output_shape [1, 4, 2, 3] : tensor<4x2x3xf32> into tensor<1x4x2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[XM]], #[[PT]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%{{.*}}: i16, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.index 1 : index
func.func @int4_per_tensor_rank3(%x: tensor<1x2x3xi16>, %s: tensor<f32>) -> tensor<4x2x3xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "int4", group_size = 0 : i64} : (tensor<1x2x3xi16>, tensor<f32>) -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}
