// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-dq-gelu-iree-cpu | FileCheck %s

// torch-onnx-dq-gelu-iree-cpu on a module tagged for an AVX2 CPU: the bias Add of a [N] constant
// and the Gelu after it as one dispatch of dq's Gelu kernel (passes/kernels/gelu.py), 8 lanes.
// [2, 3, 20] f32: 6 rows of 20, one workgroup a row; per step v = x + b, u = v / sqrt(2) (f32's),
// erf(u) by a polynomial whose coefficients a permute reads at u's interval, y = v ((erf + 1)
// 0.5); the last 4 values one by one through lane 0.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @dq_gelu_f32_bias_n20_v8_w6(
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x20xf32>
// CHECK-DAG: %[[B:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<20xf32>
// CHECK-DAG: %[[Y:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x20xf32>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[XV:.*]] = vector.load %[[X]][%[[ROW]], %[[K]]] : memref<?x20xf32>, vector<8xf32>
// CHECK: %[[BV:.*]] = vector.load %[[B]][%[[K]]] : memref<20xf32>, vector<8xf32>
// CHECK: %[[V:.*]] = arith.addf %[[XV]], %[[BV]] : vector<8xf32>
// CHECK: %[[U:.*]] = arith.divf %[[V]], %{{.*}} : vector<8xf32>
// CHECK: %[[A:.*]] = math.absf %[[U]] : vector<8xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx.min.ps.256"(%[[A]], %{{.*}})
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx2.permps"
// CHECK: arith.cmpf uno, %[[U]], %[[U]] : vector<8xf32>
// CHECK: %[[E:.*]] = arith.select
// CHECK: %[[E1:.*]] = arith.addf %[[E]], %{{.*}} : vector<8xf32>
// CHECK: %[[H:.*]] = arith.mulf %[[E1]], %{{.*}} : vector<8xf32>
// CHECK: %[[G:.*]] = arith.mulf %[[V]], %[[H]] : vector<8xf32>
// CHECK: vector.store %[[G]], %[[Y]][%[[ROW]], %[[K]]] : memref<?x20xf32>, vector<8xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: memref.load %[[B]][%[[I]]] : memref<20xf32>
// CHECK: vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK: vector.extract %{{.*}}[0] : f32 from vector<8xf32>
// CHECK-LABEL: func.func @bias
// CHECK: %[[VALUES:.*]] = "torch_c.to_builtin_tensor"(%[[IN:.*]]) : (!torch.vtensor<[2,3,20],f32>) -> tensor<2x3x20xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[VALUES]] {{\[}}[0, 1], [2]] : tensor<2x3x20xf32> into tensor<6x20xf32>
// CHECK: %[[OUT:.*]] = "flow.dispatch"(%{{.*}}, %[[ROWS]], %{{.*}}, %{{.*}}) {entry_points = [@dq_gelu_f32_bias_n20_v8_w6::@dq_gelu_f32_bias_n20_v8_w6]
// CHECK: tensor.expand_shape %[[OUT]] {{\[}}[0, 1], [2]] output_shape [2, 3, 20] : tensor<6x20xf32> into tensor<2x3x20xf32>
// CHECK-NOT: onnx.Add
// CHECK-NOT: onnx.Gelu
module attributes {dq.avx2} {
  func.func @bias(%x: !torch.vtensor<[2,3,20],f32>) -> !torch.vtensor<[2,3,20],f32> {
    %b = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<20xf32>} : () -> !torch.vtensor<[20],f32>
    %v = "torch.operator"(%x, %b) <{name = "onnx.Add"}> : (!torch.vtensor<[2,3,20],f32>, !torch.vtensor<[20],f32>) -> !torch.vtensor<[2,3,20],f32>
    %y = "torch.operator"(%v) <{name = "onnx.Gelu"}> : (!torch.vtensor<[2,3,20],f32>) -> !torch.vtensor<[2,3,20],f32>
    "func.return"(%y) : (!torch.vtensor<[2,3,20],f32>) -> ()
  }
}

// -----

// With AVX-512 (16 lanes), rows known at run time, no Add before it: eight workgroups, x alone.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @dq_gelu_f32_n48_v16_w8(
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.min.ps.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<16xf32>, i32) -> vector<16xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// CHECK-LABEL: func.func @wide
// CHECK: "flow.dispatch"(%{{.*}}) {entry_points = [@dq_gelu_f32_n48_v16_w8::@dq_gelu_f32_n48_v16_w8]
module attributes {dq.avx512bw, dq.avx2} {
  func.func @wide(%x: !torch.vtensor<[?,48],f32>) -> !torch.vtensor<[?,48],f32> {
    %y = "torch.operator"(%x) <{name = "onnx.Gelu"}> {torch.onnx.approximate = "none"} : (!torch.vtensor<[?,48],f32>) -> !torch.vtensor<[?,48],f32>
    "func.return"(%y) : (!torch.vtensor<[?,48],f32>) -> ()
  }
}

// -----

// Gelus IREE keeps: on a module without x86 tags; then, tagged for AVX2, tanh's approximation,
// f16, a dynamic last dim. An Add whose sum something else reads too stays IREE's; its Gelu is
// taken alone.
// CHECK-LABEL: func.func @untagged
// CHECK: <{name = "onnx.Gelu"}>
module {
  func.func @untagged(%x: !torch.vtensor<[2,20],f32>) -> !torch.vtensor<[2,20],f32> {
    %y = "torch.operator"(%x) <{name = "onnx.Gelu"}> : (!torch.vtensor<[2,20],f32>) -> !torch.vtensor<[2,20],f32>
    "func.return"(%y) : (!torch.vtensor<[2,20],f32>) -> ()
  }
}

// -----

// CHECK-LABEL: func.func @dq_gelu_f32_n20_v8_w2(
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: <{name = "onnx.Gelu"}>
// CHECK: %[[SUM:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Add"}>
// CHECK: "flow.dispatch"(%{{.*}}) {entry_points = [@dq_gelu_f32_n20_v8_w2::@dq_gelu_f32_n20_v8_w2]
module attributes {dq.avx2} {
  func.func @kept(%a: !torch.vtensor<[2,20],f32>, %c: !torch.vtensor<[2,20],f16>, %d: !torch.vtensor<[2,?],f32>, %b: !torch.vtensor<[20],f32>) -> (!torch.vtensor<[2,20],f32>, !torch.vtensor<[2,20],f16>, !torch.vtensor<[2,?],f32>, !torch.vtensor<[2,20],f32>, !torch.vtensor<[2,20],f32>) {
    %0 = "torch.operator"(%a) <{name = "onnx.Gelu"}> {torch.onnx.approximate = "tanh"} : (!torch.vtensor<[2,20],f32>) -> !torch.vtensor<[2,20],f32>
    %1 = "torch.operator"(%c) <{name = "onnx.Gelu"}> : (!torch.vtensor<[2,20],f16>) -> !torch.vtensor<[2,20],f16>
    %2 = "torch.operator"(%d) <{name = "onnx.Gelu"}> : (!torch.vtensor<[2,?],f32>) -> !torch.vtensor<[2,?],f32>
    %3 = "torch.operator"(%a, %b) <{name = "onnx.Add"}> : (!torch.vtensor<[2,20],f32>, !torch.vtensor<[20],f32>) -> !torch.vtensor<[2,20],f32>
    %4 = "torch.operator"(%3) <{name = "onnx.Gelu"}> : (!torch.vtensor<[2,20],f32>) -> !torch.vtensor<[2,20],f32>
    "func.return"(%0, %1, %2, %3, %4) : (!torch.vtensor<[2,20],f32>, !torch.vtensor<[2,20],f16>, !torch.vtensor<[2,?],f32>, !torch.vtensor<[2,20],f32>, !torch.vtensor<[2,20],f32>) -> ()
  }
}
