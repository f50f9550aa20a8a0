// A QDQ convolution through dequant-iree for llvm-cpu (dequant.qdq_convs): the weights and the
// int32 bias become their f32 values, each QuantizeLinear -> DequantizeLinear pair of the same
// scale and zero point its arithmetic in f32 (x / s, saturated to [lo - z, hi - z], rounded half
// to even by adding and subtracting 1.5 * 2^23, * s), so IREE compiles the float convolution
// the QDQ graph writes.
// REQUIRES: iree
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/qdq_conv.py %t/m.onnx
// RUN: %python -m dequant.iree %t/m.onnx --emit-mlir -q -o %t/cpu.mlir
// RUN: FileCheck %s < %t/cpu.mlir
// A GPU target keeps the QDQ graph as it is.
// RUN: %python -m dequant.iree %t/m.onnx --target vulkan-spirv --emit-mlir -q -o %t/gpu.mlir
// RUN: FileCheck %s --check-prefix=GPU < %t/gpu.mlir

// CHECK-LABEL: func.func @g(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[1,4,8,8],f32>
// CHECK-NOT: onnx.QuantizeLinear
// CHECK-NOT: onnx.DequantizeLinear
// CHECK-DAG: %[[S:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<[[S_RES:xf_scale.*]]> : tensor<f32>}
// CHECK-DAG: %[[LO:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<[[LO_RES:xf_min.*]]> : tensor<f32>}
// CHECK-DAG: %[[HI:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<[[HI_RES:xf_max.*]]> : tensor<f32>}
// CHECK-DAG: %[[M:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<[[M_RES:xf_round.*]]> : tensor<f32>}
// CHECK-DAG: %[[W:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<[[W_RES:wf_f32.*]]> : tensor<8x4x3x3xf32>}
// CHECK-DAG: %[[B:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<{{bf_f32.*}}> : tensor<8xf32>}
// CHECK: %[[D:.*]] = "torch.operator"(%[[X]], %[[S]]) <{name = "onnx.Div"}>
// CHECK: %[[C:.*]] = "torch.operator"(%[[D]], %[[LO]], %[[HI]]) <{name = "onnx.Clip"}>
// CHECK: %[[A:.*]] = "torch.operator"(%[[C]], %[[M]]) <{name = "onnx.Add"}>
// CHECK: %[[R:.*]] = "torch.operator"(%[[A]], %[[M]]) <{name = "onnx.Sub"}>
// CHECK: %[[XF:.*]] = "torch.operator"(%[[R]], %[[S]]) <{name = "onnx.Mul"}>
// CHECK: %[[Y:.*]] = "torch.operator"(%[[XF]], %[[W]], %[[B]]) <{name = "onnx.Conv"}> {torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]} : {{.*}} -> !torch.vtensor<[1,8,8,8],f32>
// CHECK: %[[YD:.*]] = "torch.operator"(%[[Y]], {{.*}}) <{name = "onnx.Div"}>
// CHECK: "torch.operator"(%[[YD]], {{.*}}) <{name = "onnx.Clip"}>
// CHECK: %[[OUT:.*]] = "torch.operator"({{.*}}) <{name = "onnx.Mul"}>
// CHECK: return %[[OUT]]
// The constants (after the resource's 4-byte alignment, little endian): s = f32(0.02), the
// bounds 0 - 128 and 255 - 128 (uint8's range less z = 128), 1.5 * 2^23, and the first weight:
// f32(89) * f32(0.01) (w[0, 0, 0, 0] = 89, zw = 0).
// CHECK-DAG: [[S_RES]]: "0x080000000AD7A33C"
// CHECK-DAG: [[LO_RES]]: "0x08000000000000C3"
// CHECK-DAG: [[HI_RES]]: "0x080000000000FE42"
// CHECK-DAG: [[M_RES]]: "0x080000000000404B"
// CHECK-DAG: [[W_RES]]: "0x080000000AD7633F

// GPU-LABEL: func.func @g(
// GPU: <{name = "onnx.QuantizeLinear"}>
// GPU: <{name = "onnx.DequantizeLinear"}>
// GPU: <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[8,4,3,3],si8>
// GPU: <{name = "onnx.Conv"}>
