// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --dq-unpack-to-iree | FileCheck %s

// dq-unpack-to-iree (passes/unpack_to_iree.py): a `dq.unpack` with a static integer result that
// fills whole bytes becomes IREE's `iree_tensor_ext.bitcast` of the same bytes (generic form,
// operandSegmentSizes = [source, source dims, result dims] = [1, 0, 0]) to the signless tensor,
// then, for unsigned elements, tensor.bitcast to the unsigned type. Float4 data, a dynamic
// result and a result that ends mid-byte stay dq.unpack (for dq-to-linalg).

// i4: one bitcast, nothing else.
// CHECK-LABEL: func.func @int4
// CHECK-SAME: (%[[B:[^:]+]]: tensor<8xi8>)
// CHECK-NOT: dq.unpack
// CHECK: %[[X:.*]] = "iree_tensor_ext.bitcast"(%[[B]]) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8xi8>) -> tensor<4x4xi4>
// CHECK-NEXT: return %[[X]] : tensor<4x4xi4>
func.func @int4(%b: tensor<8xi8>) -> tensor<4x4xi4> {
  %x = "dq.unpack"(%b) : (tensor<8xi8>) -> tensor<4x4xi4>
  return %x : tensor<4x4xi4>
}

// -----

// ui4: bitcast to signless i4, then tensor.bitcast to ui4.
// CHECK-LABEL: func.func @uint4
// CHECK-SAME: (%[[B:[^:]+]]: tensor<8xi8>)
// CHECK-NOT: dq.unpack
// CHECK: %[[S:.*]] = "iree_tensor_ext.bitcast"(%[[B]]) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<8xi8>) -> tensor<4x4xi4>
// CHECK-NEXT: %[[X:.*]] = tensor.bitcast %[[S]] : tensor<4x4xi4> to tensor<4x4xui4>
// CHECK-NEXT: return %[[X]] : tensor<4x4xui4>
func.func @uint4(%b: tensor<8xi8>) -> tensor<4x4xui4> {
  %x = "dq.unpack"(%b) : (tensor<8xi8>) -> tensor<4x4xui4>
  return %x : tensor<4x4xui4>
}

// -----

// i2 (3x4 = 12 elements, 3 bytes).
// CHECK-LABEL: func.func @int2
// CHECK-NOT: dq.unpack
// CHECK: %[[X:.*]] = "iree_tensor_ext.bitcast"(%{{.*}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<3xi8>) -> tensor<3x4xi2>
// CHECK-NEXT: return %[[X]]
func.func @int2(%b: tensor<3xi8>) -> tensor<3x4xi2> {
  %x = "dq.unpack"(%b) : (tensor<3xi8>) -> tensor<3x4xi2>
  return %x : tensor<3x4xi2>
}

// -----

// ui2: bitcast, then tensor.bitcast.
// CHECK-LABEL: func.func @uint2
// CHECK-NOT: dq.unpack
// CHECK: %[[S:.*]] = "iree_tensor_ext.bitcast"(%{{.*}}) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<3xi8>) -> tensor<3x4xi2>
// CHECK-NEXT: %[[X:.*]] = tensor.bitcast %[[S]] : tensor<3x4xi2> to tensor<3x4xui2>
// CHECK-NEXT: return %[[X]]
func.func @uint2(%b: tensor<3xi8>) -> tensor<3x4xui2> {
  %x = "dq.unpack"(%b) : (tensor<3xi8>) -> tensor<3x4xui2>
  return %x : tensor<3x4xui2>
}

// -----

// The dq op reading the unpacked data now reads the bitcast.
// CHECK-LABEL: func.func @feeds_dq_op
// CHECK-SAME: (%[[B:[^:]+]]: tensor<16xi8>, %[[S:[^:]+]]: tensor<4x4xf32>)
// CHECK: %[[X:.*]] = "iree_tensor_ext.bitcast"(%[[B]]) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16xi8>) -> tensor<4x8xi4>
// CHECK-NEXT: %[[Y:.*]] = "dq.onnx_dequantize_linear"(%[[X]], %[[S]]) {axis = 1 : i64, block_size = 2 : i64} : (tensor<4x8xi4>, tensor<4x4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @feeds_dq_op(%b: tensor<16xi8>, %s: tensor<4x4xf32>) -> tensor<4x8xf32> {
  %x = "dq.unpack"(%b) : (tensor<16xi8>) -> tensor<4x8xi4>
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 2 : i64} : (tensor<4x8xi4>, tensor<4x4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A constant's bytes (as torch-onnx-to-dq writes an int4 initializer) are bitcast in place.
// CHECK-LABEL: func.func @constant_bytes
// CHECK: %[[C:.*]] = arith.constant dense<[16, 50]> : tensor<2xi8>
// CHECK-NEXT: %[[X:.*]] = "iree_tensor_ext.bitcast"(%[[C]]) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2xi8>) -> tensor<4xi4>
// CHECK-NEXT: return %[[X]]
func.func @constant_bytes() -> tensor<4xi4> {
  %b = arith.constant dense<[16, 50]> : tensor<2xi8>
  %x = "dq.unpack"(%b) : (tensor<2xi8>) -> tensor<4xi4>
  return %x : tensor<4xi4>
}

// -----

// Float4 (f4E2M1FN): IREE has no packed float4; stays dq.unpack.
// CHECK-LABEL: func.func @float4_stays
// CHECK-NOT: iree_tensor_ext.bitcast
// CHECK: "dq.unpack"(%{{.*}}) : (tensor<8xi8>) -> tensor<4x4xf4E2M1FN>
func.func @float4_stays(%b: tensor<8xi8>) -> tensor<4x4xf4E2M1FN> {
  %x = "dq.unpack"(%b) : (tensor<8xi8>) -> tensor<4x4xf4E2M1FN>
  return %x : tensor<4x4xf4E2M1FN>
}

// -----

// An odd element count of i4 (3x5 = 15 nibbles: the last byte half full) stays dq.unpack.
// CHECK-LABEL: func.func @odd_count_stays
// CHECK-NOT: iree_tensor_ext.bitcast
// CHECK: "dq.unpack"(%{{.*}}) : (tensor<8xi8>) -> tensor<3x5xi4>
func.func @odd_count_stays(%b: tensor<8xi8>) -> tensor<3x5xi4> {
  %x = "dq.unpack"(%b) : (tensor<8xi8>) -> tensor<3x5xi4>
  return %x : tensor<3x5xi4>
}

// -----

// An odd count of ui2 (7 elements, 14 bits) stays too.
// CHECK-LABEL: func.func @odd_count_uint2_stays
// CHECK-NOT: iree_tensor_ext.bitcast
// CHECK-NOT: tensor.bitcast
// CHECK: "dq.unpack"(%{{.*}}) : (tensor<2xi8>) -> tensor<7xui2>
func.func @odd_count_uint2_stays(%b: tensor<2xi8>) -> tensor<7xui2> {
  %x = "dq.unpack"(%b) : (tensor<2xi8>) -> tensor<7xui2>
  return %x : tensor<7xui2>
}

// -----

// A dynamic result stays dq.unpack.
// CHECK-LABEL: func.func @dynamic_stays
// CHECK-NOT: iree_tensor_ext.bitcast
// CHECK: "dq.unpack"(%{{.*}}, %{{.*}}) : (tensor<?xi8>, index) -> tensor<?x64xi4>
func.func @dynamic_stays(%b: tensor<?xi8>, %rows: index) -> tensor<?x64xi4> {
  %x = "dq.unpack"(%b, %rows) : (tensor<?xi8>, index) -> tensor<?x64xi4>
  return %x : tensor<?x64xi4>
}
