// com.microsoft GatherBlockQuantized through dequant-iree: the packed table's byte rows are
// gathered first, and only the gathered rows are unpacked and dequantized (dequant.formats).
// REQUIRES: iree
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/gather_block_quantized.py %t/m.onnx
// RUN: %python -m dequant.iree %t/m.onnx --emit-mlir -q -o %t/m.mlir
// RUN: FileCheck %s < %t/m.mlir

// CHECK-LABEL: func.func @g(
// CHECK-SAME: %[[X:.*]]: !torch.vtensor<[?,?],si64>
// CHECK-NOT: onnx.GatherBlockQuantized
// CHECK-DAG: %[[TABLE:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {{.*}} : () -> !torch.vtensor<[1000,32],ui8>
// CHECK-DAG: %[[LUT:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {{.*}} : () -> !torch.vtensor<[256,2],ui8>
// CHECK: %[[ROWS:.*]] = "torch.operator"(%[[TABLE]], %[[X]]) <{name = "onnx.Gather"}> {{.*}} -> !torch.vtensor<[?,?,32],ui8>
// CHECK: %[[BYTES:.*]] = "torch.operator"(%[[ROWS]]) <{name = "onnx.Cast"}>
// CHECK: "torch.operator"(%[[LUT]], %[[BYTES]]) <{name = "onnx.Gather"}> {{.*}} -> !torch.vtensor<[?,?,32,2],ui8>
// CHECK: <{name = "onnx.Reshape"}> {{.*}} -> !torch.vtensor<[?,?,64],ui8>
// CHECK: <{name = "onnx.Sub"}> {{.*}} -> !torch.vtensor<[?,?,64],f32>
// CHECK: <{name = "onnx.Mul"}> {{.*}} -> !torch.vtensor<[?,?,64],f32>
// CHECK-NOT: 1000x64
