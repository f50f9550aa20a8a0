// RUN: dequant-opt %s --dq-to-linalg --split-input-file | FileCheck %s

// Data held packed by dq.unpack (docs/semantics.md#packed-sub-byte-data) is read in place:
// - rows of whole bytes: the bytes viewed as [rows, bytes per row] (tensor.reshape), the output as
//   [rows, bytes per row, elements per byte] (an expanded view), the element's bits at shift
//   k * bits, k the innermost (size 2 or 4) dim;
// - otherwise (a row starts mid-byte) the elements, contiguous across rows, unpacked into an i8
//   temporary as one row of whole bytes, [1, bytes, elements per byte], the fields of an
//   incomplete last byte at their linear index (tensor.extract of byte index / k); the
//   dequantize then reads the temporary as int8 (a float4 as its code);
// - a dynamic last dim chooses between the two at run time.

// int4, 64 columns: 32 bytes per row; blocks of 32 elements are blocks of 16 bytes.
// CHECK-DAG: #[[BYTES:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BLOCK:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1 floordiv 16)>
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @rows_of_whole_bytes
// CHECK-SAME: (%[[B:[^:]+]]: tensor<192xi8>, %[[S:[^:]+]]: tensor<6x2xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : i32
// CHECK-DAG: %[[C28:.*]] = arith.constant 28 : i32
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<6x64xf32>
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xindex>
// CHECK: %[[ROWS:.*]] = tensor.reshape %[[B]](%[[SHAPE]]) : (tensor<192xi8>, tensor<2xindex>) -> tensor<6x32xi8>
// CHECK: %[[VIEW:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0], [1, 2]] output_shape [6, 32, 2] : tensor<6x64xf32> into tensor<6x32x2xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[BYTES]], #[[BLOCK]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[ROWS]], %[[S]] : tensor<6x32xi8>, tensor<6x2xf32>) outs(%[[VIEW]] : tensor<6x32x2xf32>)
// CHECK-NEXT: ^bb0(%[[BV:[^:]+]]: i8, %[[SV:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[K:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]] : index to i32
// CHECK-NEXT: %[[SH:.*]] = arith.muli %[[KI]], %[[C4]] : i32
// CHECK-NEXT: %[[W:.*]] = arith.extui %[[BV]] : i8 to i32
// the nibble's top bit shifted to bit 31 (left by 28 - shift), then back with its sign
// CHECK-NEXT: %[[UP:.*]] = arith.subi %[[C28]], %[[SH]] : i32
// CHECK-NEXT: %[[L:.*]] = arith.shli %[[W]], %[[UP]] : i32
// CHECK-NEXT: %[[Q:.*]] = arith.shrsi %[[L]], %[[C28]] {dq.field_code = 4 : i32} : i32
// CHECK-NEXT: %[[QF:.*]] = arith.sitofp %[[Q]] : i32 to f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[QF]], %[[SV]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: tensor.collapse_shape %[[Y]] {{\[}}[0], [1, 2]] : tensor<6x32x2xf32> into tensor<6x64xf32>
func.func @rows_of_whole_bytes(%b: tensor<192xi8>, %s: tensor<6x2xf32>) -> tensor<6x64xf32> {
  %x = "dq.unpack"(%b) : (tensor<192xi8>) -> tensor<6x64xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 32 : i64} : (tensor<6x64xi4>, tensor<6x2xf32>) -> tensor<6x64xf32>
  return %y : tensor<6x64xf32>
}

// -----

// uint2, 7 columns: rows do not start on whole bytes. The 21 elements are contiguous across
// rows: the 5 whole bytes are unpacked as one row [1, 5, 4] into an i8 temporary viewed flat,
// the 21st element at its linear index, and the dequantize reads the temporary as int8 data.
// CHECK-LABEL: func.func @odd_rows
// CHECK-SAME: (%[[B:[^:]+]]: tensor<6xi8>, %[[S:[^:]+]]: tensor<3xf32>)
// CHECK: %[[T:.*]] = tensor.empty() : tensor<3x7xi8>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0, 1]] : tensor<3x7xi8> into tensor<21xi8>
// CHECK: %[[ROW:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [1, %{{.*}}] : tensor<?xi8> into tensor<1x?xi8>
// CHECK: linalg.generic {{.*}} ins(%[[ROW]] : tensor<1x?xi8>) outs(%{{.*}} : tensor<1x?x4xi8>)
// CHECK: linalg.index 2 : index
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
// CHECK: %[[HEAD:.*]] = tensor.insert_slice
// CHECK: %[[REST:.*]] = tensor.extract_slice %[[HEAD]]
// CHECK: linalg.generic {{.*}} outs(%[[REST]] : tensor<?xi8>)
// CHECK: tensor.extract %[[B]]
// unsigned 2-bit: the field, zero-extended
// CHECK: arith.andi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: arith.trunci
// CHECK: %[[ALL:.*]] = tensor.insert_slice %{{.*}} into %[[HEAD]]
// CHECK: %[[X:.*]] = tensor.reshape %[[ALL]]
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[S]] : tensor<3x7xi8>, tensor<3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.extsi
// CHECK-NEXT: arith.sitofp
func.func @odd_rows(%b: tensor<6xi8>, %s: tensor<3xf32>) -> tensor<3x7xf32> {
  %x = "dq.unpack"(%b) : (tensor<6xi8>) -> tensor<3x7xui2>
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 0 : i64} : (tensor<3x7xui2>, tensor<3xf32>) -> tensor<3x7xf32>
  return %y : tensor<3x7xf32>
}

// -----

// A dynamic last dim: rows of whole bytes or not is known at run time (an scf.if on its parity);
// the byte count is checked against the dims (kind 5, passes/checks.py).
// CHECK-LABEL: func.func @dynamic
// CHECK: arith.ceildivui
// CHECK: arith.constant 5497558138880 : i64
// CHECK: scf.if
// CHECK: %[[REM:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : index
// CHECK: scf.if %[[WHOLE]] -> (tensor<?x?xf32>) {
// CHECK: tensor.reshape
// CHECK: linalg.generic
// CHECK: } else {
// CHECK: tensor.extract
func.func @dynamic(%b: tensor<?xi8>, %r: index, %c: index, %s: tensor<f32>) -> tensor<?x?xf32> {
  %x = "dq.unpack"(%b, %r, %c) : (tensor<?xi8>, index, index) -> tensor<?x?xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<?x?xi4>, tensor<f32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// The `dq.rows` hint trims the branch the caller does not expect: "whole" keeps the per-row read
// and reads rows that are not whole bytes element by element at their linear index (no
// temporary), a generic tagged dq.lean_loops (dq-vectorize compiles its loops lean: the hint says
// it does not run); "partial" compiles the one-row read alone (no output viewed as [rows, bytes, 2]).
// CHECK-LABEL: func.func @hinted_whole
// CHECK: scf.if
// CHECK: tensor.reshape
// CHECK: } else {
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} attrs = {dq.lean_loops}
// CHECK: linalg.index 1
// CHECK: tensor.extract
// CHECK: scf.yield
// CHECK: return
func.func @hinted_whole(%b: tensor<?xi8>, %r: index, %c: index, %s: tensor<f32>) -> tensor<?x?xf32> {
  %x = "dq.unpack"(%b, %r, %c) {dq.rows = "whole"} : (tensor<?xi8>, index, index) -> tensor<?x?xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<?x?xi4>, tensor<f32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
// CHECK-LABEL: func.func @hinted_partial
// CHECK-NOT: tensor<?x?x2xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<?x?xi8> into tensor<?xi8>
// CHECK-NOT: tensor<?x?x2xf32>
// CHECK: tensor.reshape
// CHECK-NOT: tensor<?x?x2xf32>
// CHECK: return
func.func @hinted_partial(%b: tensor<?xi8>, %r: index, %c: index, %s: tensor<f32>) -> tensor<?x?xf32> {
  %x = "dq.unpack"(%b, %r, %c) {dq.rows = "partial"} : (tensor<?xi8>, index, index) -> tensor<?x?xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<?x?xi4>, tensor<f32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// A packed zero point is unpacked first into i8 values (it is scale-sized), by a generic over its
// bytes and their fields, as packed x is read (dq-vectorize vectorizes it), then read as usual.
// CHECK-LABEL: func.func @packed_zero_point
// CHECK-SAME: %[[ZB:[^:]+]]: tensor<2xi8>
// CHECK: %[[ZINIT:.*]] = tensor.empty() : tensor<4xi8>
// CHECK: %[[ZV:.*]] = tensor.expand_shape %[[ZINIT]] {{\[}}[0, 1]] output_shape [2, 2] : tensor<4xi8> into tensor<2x2xi8>
// CHECK: %[[ZF:.*]] = linalg.generic {{.*}} ins(%[[ZB]] : tensor<2xi8>) outs(%[[ZV]] : tensor<2x2xi8>)
// CHECK: %[[K:.*]] = linalg.index 1 : index
// CHECK-NOT: tensor.extract
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[Z:.*]] = tensor.collapse_shape %[[ZF]] {{\[}}[0, 1]] : tensor<2x2xi8> into tensor<4xi8>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[Z]] : tensor<4x4xi4>, tensor<4xf32>, tensor<4xi8>)
func.func @packed_zero_point(%x: tensor<4x4xi4>, %s: tensor<4xf32>, %zb: tensor<2xi8>) -> tensor<4x4xf32> {
  %z = "dq.unpack"(%zb) : (tensor<2xi8>) -> tensor<4xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64} : (tensor<4x4xi4>, tensor<4xf32>, tensor<4xi4>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// A packed zero point whose rows are not whole bytes (3 int4 values): its whole byte is unpacked
// as a row [1, 1, 2] into a slice of the i8 values, the third value at its linear index.
// CHECK-LABEL: func.func @packed_zero_point_odd
// CHECK: %[[ZINIT:.*]] = tensor.empty() : tensor<3xi8>
// CHECK: %[[ZFLAT:.*]] = tensor.cast %[[ZINIT]] : tensor<3xi8> to tensor<?xi8>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x?x2xi8>)
// CHECK-NOT: tensor.extract
// CHECK: tensor.insert_slice %{{.*}} into %[[ZFLAT]]
// CHECK: linalg.generic
// CHECK: tensor.extract
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: %[[ZALL:.*]] = tensor.insert_slice
// CHECK: %[[Z:.*]] = tensor.cast %[[ZALL]] : tensor<?xi8> to tensor<3xi8>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[Z]] : tensor<3x4xi4>, tensor<3xf32>, tensor<3xi8>)
func.func @packed_zero_point_odd(%x: tensor<3x4xi4>, %s: tensor<3xf32>, %zb: tensor<2xi8>) -> tensor<3x4xf32> {
  %z = "dq.unpack"(%zb) : (tensor<2xi8>) -> tensor<3xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 0 : i64} : (tensor<3x4xi4>, tensor<3xf32>, tensor<3xi4>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// Per-axis along packed int4 columns: the scale (8 elements) is viewed as [4 bytes, 2 fields]
// and read at (byte, field), not at the index 2 * byte + field.
// CHECK-DAG: #[[BYTES:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[FIELD:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @per_axis_along_packed_columns
// CHECK-SAME: (%[[B:[^:]+]]: tensor<12xi8>, %[[S:[^:]+]]: tensor<8xf32>)
// CHECK: %[[SV:.*]] = tensor.expand_shape %[[S]] {{\[}}[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[BYTES]], #[[FIELD]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %[[SV]] : tensor<3x4xi8>, tensor<4x2xf32>)
func.func @per_axis_along_packed_columns(%b: tensor<12xi8>, %s: tensor<8xf32>) -> tensor<3x8xf32> {
  %x = "dq.unpack"(%b) : (tensor<12xi8>) -> tensor<3x8xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64} : (tensor<3x8xi4>, tensor<8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}
