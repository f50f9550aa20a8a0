// RUN: dequant-opt %s --dq-to-linalg --split-input-file | FileCheck %s

// dq.ngraph_dequantize lowers to one linalg.generic computing
//   output[i] = (input[i] - zero_point[j]) * scale[j],  j = i projected onto `axes`
// so scale and zero point are read through `-> (d<a> for a in axes)`: `-> ()` for axes {}.
// The subtraction is exact in i32 (i64 for i32 input); it is converted once to f32 (f64 for
// an f64 output), multiplied by the scale in that type and rounded once to `type`.

// axes omitted ({}): rank-0 scale and zero point.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[NONE:map[0-9]*]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @axes_empty_f32(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xi8>, %[[S:.*]]: tensor<f32>, %[[Z:.*]]: tensor<i8>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[NONE]], #[[NONE]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[S]], %[[Z]] : tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) outs(%[[INIT]] : tensor<2x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f32, %[[ZP:.*]]: i8, %{{.*}}: f32):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extsi %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[Y]] : tensor<2x3x4xf32>
func.func @axes_empty_f32(%x: tensor<2x3x4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<2x3x4xf32> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// axes {0, 2}; i32 input and zero point: x - z in 16-bit halves (exact_difference); f64 arithmetic.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[PROJ:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @axes_0_2_i32_f64(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PROJ]], #[[PROJ]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i32, %[[SC:.*]]: f64, %[[ZP:.*]]: i32, %{{.*}}: f64):
// CHECK: %[[ZHF:.*]] = arith.sitofp %{{.*}} : i32 to f64
// CHECK: %[[XHF:.*]] = arith.sitofp %{{.*}} : i32 to f64
// CHECK-NEXT: %[[H:.*]] = arith.subf %[[XHF]], %[[ZHF]] : f64
// CHECK-NEXT: %[[L:.*]] = arith.subi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[LF:.*]] = arith.sitofp %[[L]] : i32 to f64
// CHECK-NEXT: %[[F:.*]] = arith.addf %[[H]], %[[LF]] : f64
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f64
// CHECK-NEXT: linalg.yield %[[R]] : f64
func.func @axes_0_2_i32_f64(%x: tensor<2x3x4xi32>, %s: tensor<2x4xf64>, %z: tensor<2x4xi32>) -> tensor<2x3x4xf64> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f64, axes = array<i64: 0, 2>} : (tensor<2x3x4xi32>, tensor<2x4xf64>, tensor<2x4xi32>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

// -----

// f64 output from i8: the i32 difference converts straight to f64 (no f32 step).
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[NONE:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @axes_empty_i8_f64(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[NONE]], #[[NONE]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f64, %[[ZP:.*]]: i8, %{{.*}}: f64):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extsi %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f64
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC]] : f64
// CHECK-NEXT: linalg.yield %[[R]] : f64
func.func @axes_empty_i8_f64(%x: tensor<2x3xi8>, %s: tensor<f64>, %z: tensor<i8>) -> tensor<2x3xf64> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f64} : (tensor<2x3xi8>, tensor<f64>, tensor<i8>) -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}

// -----

// axes {1} with a dynamic dim 0; u8 zero-extended; f16 computed in f32, rounded once.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PROJ:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @axes_1_u8_f16_dynamic(
// CHECK-SAME: %[[X:.*]]: tensor<?x3xui8>,
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[DIM:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x3xui8>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<?x3xf16>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[PROJ]], #[[PROJ]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<?x3xf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: f16, %[[ZP:.*]]: i8, %{{.*}}: f16):
// CHECK-NEXT: %[[A:.*]] = arith.extui %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extui %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[SC32:.*]] = arith.extf %[[SC]] : f16 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC32]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[T]] : f16
func.func @axes_1_u8_f16_dynamic(%x: tensor<?x3xui8>, %s: tensor<3xf16>, %z: tensor<3xui8>) -> tensor<?x3xf16> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f16, axes = array<i64: 1>} : (tensor<?x3xui8>, tensor<3xf16>, tensor<3xui8>) -> tensor<?x3xf16>
  return %y : tensor<?x3xf16>
}

// -----

// Every axis: scale and zero point are read elementwise (identity map); bf16 via f32.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @axes_all_bf16(
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %[[SC:.*]]: bf16, %[[ZP:.*]]: i8, %{{.*}}: bf16):
// CHECK-NEXT: %[[A:.*]] = arith.extsi %[[IN]] : i8 to i32
// CHECK-NEXT: %[[B:.*]] = arith.extsi %[[ZP]] : i8 to i32
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[D]] : i32 to f32
// CHECK-NEXT: %[[SC32:.*]] = arith.extf %[[SC]] : bf16 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[F]], %[[SC32]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[T]] : bf16
func.func @axes_all_bf16(%x: tensor<2x3xi8>, %s: tensor<2x3xbf16>, %z: tensor<2x3xi8>) -> tensor<2x3xbf16> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = bf16, axes = array<i64: 0, 1>} : (tensor<2x3xi8>, tensor<2x3xbf16>, tensor<2x3xi8>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}
