// RUN: dequant-opt %s | dequant-opt | FileCheck %s
// RUN: dequant-opt %s --mlir-print-op-generic | dequant-opt | FileCheck %s

// Parse/print round trips of dq.ngraph_dequantize (nGraph Dequantize): input i8/u8/i32, a
// zero point of the input's type (required), scale and output of element type `type` (f16,
// bf16, f32, f64, required). `axes` (default: empty, per tensor) is a set of axes; scale and
// zero point have the input's shape projected onto them. Attributes left out stay out.

// ---- axes omitted (default {}): rank-0 scale and zero point.

// CHECK-LABEL: func.func @axes_default(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xi8>, %[[S:.*]]: tensor<f32>, %[[Z:.*]]: tensor<i8>) -> tensor<2x3x4xf32>
// CHECK: %[[Y:.*]] = "dq.ngraph_dequantize"(%[[X]], %[[S]], %[[Z]]) {type = f32} : (tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3x4xf32>
// CHECK-NEXT: return %[[Y]] : tensor<2x3x4xf32>
func.func @axes_default(%x: tensor<2x3x4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<2x3x4xf32> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// The empty set given explicitly.
// CHECK-LABEL: func.func @axes_empty(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64>, type = f32} : (tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3x4xf32>
func.func @axes_empty(%x: tensor<2x3x4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<2x3x4xf32> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64>} : (tensor<2x3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// ---- Every output type (= scale type) with every input type (= zero point type).

// CHECK-LABEL: func.func @u8_f16(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {type = f16} : (tensor<2x3x4xui8>, tensor<f16>, tensor<ui8>) -> tensor<2x3x4xf16>
func.func @u8_f16(%x: tensor<2x3x4xui8>, %s: tensor<f16>, %z: tensor<ui8>) -> tensor<2x3x4xf16> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f16} : (tensor<2x3x4xui8>, tensor<f16>, tensor<ui8>) -> tensor<2x3x4xf16>
  return %y : tensor<2x3x4xf16>
}

// CHECK-LABEL: func.func @i8_bf16(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {type = bf16} : (tensor<2x3x4xi8>, tensor<bf16>, tensor<i8>) -> tensor<2x3x4xbf16>
func.func @i8_bf16(%x: tensor<2x3x4xi8>, %s: tensor<bf16>, %z: tensor<i8>) -> tensor<2x3x4xbf16> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = bf16} : (tensor<2x3x4xi8>, tensor<bf16>, tensor<i8>) -> tensor<2x3x4xbf16>
  return %y : tensor<2x3x4xbf16>
}

// CHECK-LABEL: func.func @i32_f32(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {type = f32} : (tensor<2x3x4xi32>, tensor<f32>, tensor<i32>) -> tensor<2x3x4xf32>
func.func @i32_f32(%x: tensor<2x3x4xi32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<2x3x4xf32> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<2x3x4xi32>, tensor<f32>, tensor<i32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @i32_f64(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {type = f64} : (tensor<2x3x4xi32>, tensor<f64>, tensor<i32>) -> tensor<2x3x4xf64>
func.func @i32_f64(%x: tensor<2x3x4xi32>, %s: tensor<f64>, %z: tensor<i32>) -> tensor<2x3x4xf64> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f64} : (tensor<2x3x4xi32>, tensor<f64>, tensor<i32>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

// CHECK-LABEL: func.func @u8_f64(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {type = f64} : (tensor<2x3x4xui8>, tensor<f64>, tensor<ui8>) -> tensor<2x3x4xf64>
func.func @u8_f64(%x: tensor<2x3x4xui8>, %s: tensor<f64>, %z: tensor<ui8>) -> tensor<2x3x4xf64> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f64} : (tensor<2x3x4xui8>, tensor<f64>, tensor<ui8>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

// ---- Non-empty axes: the input's shape projected onto them, in ascending order.

// CHECK-LABEL: func.func @axes_first(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: 0>, type = f32} : (tensor<2x3x4xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3x4xf32>
func.func @axes_first(%x: tensor<2x3x4xi8>, %s: tensor<2xf32>, %z: tensor<2xi8>) -> tensor<2x3x4xf32> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 0>} : (tensor<2x3x4xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @axes_1(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: 1>, type = f16} : (tensor<2x3x4xui8>, tensor<3xf16>, tensor<3xui8>) -> tensor<2x3x4xf16>
func.func @axes_1(%x: tensor<2x3x4xui8>, %s: tensor<3xf16>, %z: tensor<3xui8>) -> tensor<2x3x4xf16> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f16, axes = array<i64: 1>} : (tensor<2x3x4xui8>, tensor<3xf16>, tensor<3xui8>) -> tensor<2x3x4xf16>
  return %y : tensor<2x3x4xf16>
}

// CHECK-LABEL: func.func @axes_last(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: 2>, type = f64} : (tensor<2x3x4xi32>, tensor<4xf64>, tensor<4xi32>) -> tensor<2x3x4xf64>
func.func @axes_last(%x: tensor<2x3x4xi32>, %s: tensor<4xf64>, %z: tensor<4xi32>) -> tensor<2x3x4xf64> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f64, axes = array<i64: 2>} : (tensor<2x3x4xi32>, tensor<4xf64>, tensor<4xi32>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

// CHECK-LABEL: func.func @axes_0_2(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: 0, 2>, type = bf16} : (tensor<2x3x4xi8>, tensor<2x4xbf16>, tensor<2x4xi8>) -> tensor<2x3x4xbf16>
func.func @axes_0_2(%x: tensor<2x3x4xi8>, %s: tensor<2x4xbf16>, %z: tensor<2x4xi8>) -> tensor<2x3x4xbf16> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = bf16, axes = array<i64: 0, 2>} : (tensor<2x3x4xi8>, tensor<2x4xbf16>, tensor<2x4xi8>) -> tensor<2x3x4xbf16>
  return %y : tensor<2x3x4xbf16>
}

// Every axis: scale and zero point have the input's shape.
// CHECK-LABEL: func.func @axes_all(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: 0, 1, 2>, type = f32} : (tensor<2x3x4xui8>, tensor<2x3x4xf32>, tensor<2x3x4xui8>) -> tensor<2x3x4xf32>
func.func @axes_all(%x: tensor<2x3x4xui8>, %s: tensor<2x3x4xf32>, %z: tensor<2x3x4xui8>) -> tensor<2x3x4xf32> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xui8>, tensor<2x3x4xf32>, tensor<2x3x4xui8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// A rank-0 input (only axes {} is possible).
// CHECK-LABEL: func.func @rank0(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {type = f32} : (tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<f32>
func.func @rank0(%x: tensor<i32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<f32> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32} : (tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<f32>
  return %y : tensor<f32>
}

// ---- Dynamic dims.

// Dynamic input dims, static scale and zero point along them.
// CHECK-LABEL: func.func @dynamic_input(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: 0, 2>, type = f32} : (tensor<?x3x?xi8>, tensor<2x4xf32>, tensor<2x4xi8>) -> tensor<?x3x?xf32>
func.func @dynamic_input(%x: tensor<?x3x?xi8>, %s: tensor<2x4xf32>, %z: tensor<2x4xi8>) -> tensor<?x3x?xf32> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f32, axes = array<i64: 0, 2>} : (tensor<?x3x?xi8>, tensor<2x4xf32>, tensor<2x4xi8>) -> tensor<?x3x?xf32>
  return %y : tensor<?x3x?xf32>
}

// Dynamic scale and zero point dims, one dynamic where the other is static.
// CHECK-LABEL: func.func @dynamic_scale(
// CHECK: "dq.ngraph_dequantize"(%{{.*}}, %{{.*}}, %{{.*}}) {axes = array<i64: 1>, type = f64} : (tensor<?x?xui8>, tensor<?xf64>, tensor<5xui8>) -> tensor<?x5xf64>
func.func @dynamic_scale(%x: tensor<?x?xui8>, %s: tensor<?xf64>, %z: tensor<5xui8>) -> tensor<?x5xf64> {
  %y = "dq.ngraph_dequantize"(%x, %s, %z) {type = f64, axes = array<i64: 1>} : (tensor<?x?xui8>, tensor<?xf64>, tensor<5xui8>) -> tensor<?x5xf64>
  return %y : tensor<?x5xf64>
}
