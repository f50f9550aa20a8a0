// RUN: dequant-opt %s --allow-unregistered-dialect --torch-onnx-dq-lookup-iree-cpu | FileCheck %s

// A table lookup of 8-bit codes, Gather(T, Cast<int32>(codes) [+ 128 for int8]) of a constant T
// of 256 codes (python/qdq_tables.py writes an activation between a DequantizeLinear and a
// QuantizeLinear so), as torch-onnx-dq-lookup-iree-cpu takes it: one dispatch of dq's lookup kernel.

// Codes of IREE's QuantizeLinear of the argument: one dispatch of dq's
// lookup kernel over the codes' 6 x 10 bytes, collapsed to one dim and expanded back. A Gather
// of another form stays IREE's: along axis 1 of a [1, 256] table.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_lookup_60]](
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<60xi8>
// CHECK-DAG: %[[T:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<256xi8>
// CHECK: scf.for
// CHECK: %[[C:.*]] = memref.load %[[X]]
// CHECK: memref.load %[[T]]
// CHECK-LABEL: func.func @lookup_alone
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<6x10xi8> into tensor<60xi8>
// CHECK: %[[D:.*]] = "flow.dispatch"(%{{[^,]+}}, %[[FLAT]], %{{[^,]+}}, %{{[^)]+}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK: tensor.expand_shape %[[D]] {{\[\[}}0, 1]] output_shape [6, 10] : tensor<60xi8> into tensor<6x10xi8>
// CHECK: "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Gather"}> {torch.onnx.axis = 1 : si64}
// CHECK: return
module attributes {dq.avx2} {
func.func @lookup_alone(%a: !torch.vtensor<[6,10],f32>) -> (!torch.vtensor<[6,10],ui8>, !torch.vtensor<[1,6,10],ui8>) {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %t = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<256xui8>} : () -> !torch.vtensor<[256],ui8>
  %t2 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<1x256xui8>} : () -> !torch.vtensor<[1,256],ui8>
  %q = "torch.operator"(%a, %s, %z) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[6,10],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[6,10],ui8>
  %i = "torch.operator"(%q) <{name = "onnx.Cast"}> {torch.onnx.to = 6 : si64} : (!torch.vtensor<[6,10],ui8>) -> !torch.vtensor<[6,10],si32>
  %g = "torch.operator"(%t, %i) <{name = "onnx.Gather"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[256],ui8>, !torch.vtensor<[6,10],si32>) -> !torch.vtensor<[6,10],ui8>
  %q2 = "torch.operator"(%a, %s, %z) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[6,10],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[6,10],ui8>
  %i2 = "torch.operator"(%q2) <{name = "onnx.Cast"}> {torch.onnx.to = 6 : si64} : (!torch.vtensor<[6,10],ui8>) -> !torch.vtensor<[6,10],si32>
  %g2 = "torch.operator"(%t2, %i2) <{name = "onnx.Gather"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[1,256],ui8>, !torch.vtensor<[6,10],si32>) -> !torch.vtensor<[1,6,10],ui8>
  "func.return"(%g, %g2) : (!torch.vtensor<[6,10],ui8>, !torch.vtensor<[1,6,10],ui8>) -> ()
}
}
