// RUN: dequant-opt %s --dq-to-linalg --split-input-file | FileCheck %s

// dq.onednn_dynamic_dequantize lowers to one linalg.generic computing
//   output = (input - zps) * scales
// with input read through the identity map and scales/zps through the granularity's map:
// per_tensor `-> (0)` (the one element), per_channel `-> (d<axis>)` with a negative axis
// counted from the back. The subtraction is exact: i32 for 8-bit input and zps, i64 once s32
// zps are involved; then one sitofp to f32 and one mulf by the scale.

// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ZERO:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @per_tensor_no_zps(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xi8>, %[[S:.*]]: tensor<1xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ZERO]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[S]] : tensor<4x8xi8>, tensor<1xf32>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[W]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[Y]] : tensor<4x8xf32>
func.func @per_tensor_no_zps(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// s32 zps: x - zps is exact without i64 (dialect/decode.py, exact_difference): the input minus
// the zero point's low 16 bits in i32, converted, minus its high part converted (both exact).
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ZERO:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @per_tensor_s32_zps(
// CHECK-DAG: %[[LOW:.*]] = arith.constant 65535 : i32
// CHECK-DAG: %[[HIGH:.*]] = arith.constant -65536 : i32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ZERO]], #[[ZERO]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[ZL:.*]] = arith.andi %[[ZP]], %[[LOW]] : i32
// CHECK-NEXT: %[[ZH:.*]] = arith.andi %[[ZP]], %[[HIGH]] : i32
// CHECK-NEXT: %[[ZHF:.*]] = arith.sitofp %[[ZH]] : i32 to f32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[ZL]] : i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[F:.*]] = arith.subf %[[DF]], %[[ZHF]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @per_tensor_s32_zps(%x: tensor<4x8xi8>, %s: tensor<1xf32>, %z: tensor<1xi32>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_tensor"} : (tensor<4x8xi8>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// per_channel along the default axis 1; u8 input and u8 zps are zero-extended.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[CH:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @per_channel_default_axis(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extui %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extui %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @per_channel_default_axis(%x: tensor<4x8xui8>, %s: tensor<8xf32>, %z: tensor<8xui8>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel"} : (tensor<4x8xui8>, tensor<8xf32>, tensor<8xui8>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// axis = -1 of a rank-3 input is dim 2; a dynamic dim sizes the output from the input.
// u8 input zero-extended, s8 zps sign-extended.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[CH:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @per_channel_axis_minus1_dynamic(
// CHECK-SAME: %[[X:.*]]: tensor<2x?x4xui8>,
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[DIM:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<2x?x4xui8>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<2x?x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<2x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extui %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extsi %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @per_channel_axis_minus1_dynamic(%x: tensor<2x?x4xui8>, %s: tensor<4xf32>, %z: tensor<4xi8>) -> tensor<2x?x4xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel", axis = -1 : i64} : (tensor<2x?x4xui8>, tensor<4xf32>, tensor<4xi8>) -> tensor<2x?x4xf32>
  return %y : tensor<2x?x4xf32>
}

// -----

// axis = -3 (= -r) of a rank-3 input is dim 0; s32 zps with u8 input: the split subtraction.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[CH:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @per_channel_axis_minus_r(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extui %[[IN]] : i8 to i32
// CHECK-NEXT: %[[ZL:.*]] = arith.andi %[[ZP]], %{{.*}} : i32
// CHECK-NEXT: %[[ZH:.*]] = arith.andi %[[ZP]], %{{.*}} : i32
// CHECK-NEXT: %[[ZHF:.*]] = arith.sitofp %[[ZH]] : i32 to f32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[ZL]] : i32
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[F:.*]] = arith.subf %[[DF]], %[[ZHF]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @per_channel_axis_minus_r(%x: tensor<4x8x2xui8>, %s: tensor<4xf32>, %z: tensor<4xi32>) -> tensor<4x8x2xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s, %z) {qtype = "per_channel", axis = -3 : i64} : (tensor<4x8x2xui8>, tensor<4xf32>, tensor<4xi32>) -> tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}

// -----

// per_tensor ignores axis (even one out of range for per_channel).
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ZERO:map[0-9]*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @per_tensor_axis_ignored(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ZERO]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
func.func @per_tensor_axis_ignored(%x: tensor<4x8xi8>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  %y = "dq.onednn_dynamic_dequantize"(%x, %s) {axis = 7 : i64} : (tensor<4x8xi8>, tensor<1xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
