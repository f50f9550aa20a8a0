// RUN: dequant-opt %s --dq-packed-arguments | FileCheck %s

// An argument marked dq.packed takes a descriptor of the logical sizes over packed bytes: it is
// retyped to i8 (same sizes), its first ceil(elements * bits / 8) bytes viewed flat
// (to_buffer + reinterpret_cast + to_tensor restrict) and unpacked by dq.unpack.
// CHECK-LABEL: func.func @packed
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x64xi8> {dq.packed}, %[[S:[^:]+]]: tensor<?x2xf32>)
// CHECK-DAG: %[[R:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x64xi8>
// CHECK: %[[N:.*]] = arith.ceildivui %{{.*}}, %{{.*}} : index
// CHECK: %[[M:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<?x64xi8> to memref<?x64xi8>
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[M]] to offset: [0], sizes: [%[[N]]], strides: [1] : memref<?x64xi8> to memref<?xi8>
// CHECK: %[[BYTES:.*]] = bufferization.to_tensor %[[FLAT]] restrict : memref<?xi8> to tensor<?xi8>
// CHECK: %[[U:.*]] = "dq.unpack"(%[[BYTES]], %[[R]]) : (tensor<?xi8>, index) -> tensor<?x64xi4>
// CHECK: "dq.onnx_dequantize_linear"(%[[U]], %[[S]])
func.func @packed(%x: tensor<?x64xi4> {dq.packed}, %s: tensor<?x2xf32>) -> tensor<?x64xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 32 : i64} : (tensor<?x64xi4>, tensor<?x2xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// A `dq.rows` argument attribute (the caller's hint: rows of whole bytes or not) goes onto the
// dq.unpack, where dq-to-linalg reads it.
// CHECK-LABEL: func.func @hinted
// CHECK: "dq.unpack"(%{{.*}}, %{{.*}}, %{{.*}}) {dq.rows = "partial"} : (tensor<?xi8>, index, index) -> tensor<?x?xi4>
func.func @hinted(%x: tensor<?x?xi4> {dq.packed, dq.rows = "partial"}, %s: tensor<f32>) -> tensor<?x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<?x?xi4>, tensor<f32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
