// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-dq-im2col-iree-cpu | FileCheck %s

// torch-onnx-dq-im2col-iree-cpu: the stage's dequant.Im2col node (python/qdq_conv_matmuls.py) as
// one dispatch of dq's im2col kernel (passes/kernels/im2col.py). A 3 x 3 stem of stride 2 on
// [1, 5, 5, 3] uint8 codes padded by 1 with zx = 130: Ho = Wo = (5 + 2 - 3) / 2 + 1 = 3, so 9 rows
// of 27 codes, padded to 32. x is read flat (a kernel row's 3 taps are 9 contiguous bytes), one
// workgroup per output image row (3).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: "stream.return"(%[[C3]], %{{.*}}, %{{.*}}) : (index, index, index) -> ()
// CHECK: func.func @[[K:dq_im2col_n1_h5_w5_c3_k3x3_s2x2_p1x1x1x1_r32]](
// CHECK: %[[C27:.*]] = arith.constant 27 : index
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<75xi8>
// CHECK-DAG: %[[Z:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1xi8>
// CHECK-DAG: %[[Y:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<9x32xi8>
// CHECK: %[[ZX:.*]] = memref.load %[[Z]][%{{.*}}] : memref<1xi8>
// The first kernel row: the window wholly in x, one copy of its 9 bytes; else each tap by itself,
// copied where it lies in x, zx where it lies in the padding.
// CHECK: scf.if %{{.*}} {
// CHECK: %[[SPAN:.*]] = vector.load %[[X]][%{{.*}}] : memref<75xi8>, vector<9xi8>
// CHECK-NEXT: vector.store %[[SPAN]], %[[Y]][%[[ROW:.*]], %{{.*}}] : memref<9x32xi8>, vector<9xi8>
// CHECK-NEXT: } else {
// CHECK: scf.if %{{.*}} {
// CHECK: %[[TAP:.*]] = vector.load %[[X]][%{{.*}}] : memref<75xi8>, vector<3xi8>
// CHECK-NEXT: vector.store %[[TAP]], %[[Y]][%[[ROW]], %{{.*}}] : memref<9x32xi8>, vector<3xi8>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[PAD:.*]] = vector.broadcast %[[ZX]] : i8 to vector<3xi8>
// CHECK-NEXT: vector.store %[[PAD]], %[[Y]][%[[ROW]], %{{.*}}] : memref<9x32xi8>, vector<3xi8>
// The row's last 5 codes: zx.
// CHECK: %[[TAIL:.*]] = vector.broadcast %[[ZX]] : i8 to vector<5xi8>
// CHECK-NEXT: vector.store %[[TAIL]], %[[Y]][%[[ROW]], %[[C27]]] : memref<9x32xi8>, vector<5xi8>
// CHECK-LABEL: func.func @stem
// CHECK: %[[CODES:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[1,5,5,3],ui8>) -> tensor<1x5x5x3xi8>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[CODES]] {{\[\[}}0, 1, 2, 3]] : tensor<1x5x5x3xi8> into tensor<75xi8>
// CHECK: %[[ZC:.*]] = arith.constant dense<-126> : tensor<1xi8>
// CHECK: %[[ROWS:.*]] = "flow.dispatch"(%{{[^,]+}}, %[[FLAT]], %[[ZC]], %{{[^)]+}}) {entry_points = [@[[K]]::@[[K]]]{{.*}} -> tensor<9x32xi8>
// CHECK: "torch_c.from_builtin_tensor"(%[[ROWS]]) : (tensor<9x32xi8>) -> !torch.vtensor<[9,32],ui8>
// CHECK-NOT: onnx.Im2col
func.func @stem(%x: !torch.vtensor<[1,5,5,3],ui8>) -> !torch.vtensor<[9,32],ui8> {
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %y = "torch.operator"(%x, %zx) <{name = "onnx.Im2col"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.columns = 32 : si64} : (!torch.vtensor<[1,5,5,3],ui8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[9,32],ui8>
  "func.return"(%y) : (!torch.vtensor<[9,32],ui8>) -> ()
}

// -----

// 64 channels, 3 x 3 of stride 1 without pads: a kernel row's window is 192 contiguous bytes,
// copied 64 at a time (a loop of three); rows of exactly 576 codes (nothing after them).
// CHECK-LABEL: func.func @dq_im2col_n1_h4_w4_c64_k3x3_s1x1_r576(
// CHECK: scf.for %[[O:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: vector.load %{{.*}} : memref<1024xi8>, vector<64xi8>
// CHECK: vector.store %{{.*}} : memref<4x576xi8>, vector<64xi8>
// CHECK-NOT: vector<{{[0-9]+}}xi8>
// CHECK: } else {
// CHECK: vector.load %{{.*}} : memref<1024xi8>, vector<64xi8>
// CHECK-LABEL: func.func @wide
// CHECK: -> tensor<4x576xi8>
func.func @wide(%x: !torch.vtensor<[1,4,4,64],si8>) -> !torch.vtensor<[4,576],si8> {
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-3> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %y = "torch.operator"(%x, %zx) <{name = "onnx.Im2col"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.columns = 576 : si64} : (!torch.vtensor<[1,4,4,64],si8>, !torch.vtensor<[],si8>) -> !torch.vtensor<[4,576],si8>
  "func.return"(%y) : (!torch.vtensor<[4,576],si8>) -> ()
}
