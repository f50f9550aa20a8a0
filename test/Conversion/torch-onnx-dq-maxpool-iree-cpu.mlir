// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-dq-maxpool-iree-cpu | FileCheck %s

// torch-onnx-dq-maxpool-iree-cpu: the stage's dequant.NhwcMaxPool node (python/qdq_conv_matmuls.py)
// as one dispatch of dq's max pooling kernel (passes/kernels/maxpool.py). A 3 x 3 window of stride
// 2 on [1, 5, 5, 8] uint8 codes padded by 1: [1, 3, 3, 8], one workgroup per output image row (3),
// x read as [pixels, channels]. A window wholly in x: its 9 taps' codes compared unsigned from the
// type's lowest; one across the padding: each tap in x only, its address checked first.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: "stream.return"(%[[C3]], %{{.*}}, %{{.*}}) : (index, index, index) -> ()
// CHECK: func.func @[[K:dq_maxpool_u8_n1_h5_w5_c8_k3x3_s2x2_p1x1x1x1]](
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<25x8xi8>
// CHECK-DAG: %[[Y:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<9x8xi8>
// CHECK: scf.if %{{.*}} {
// CHECK: %[[LOW:.*]] = arith.constant dense<0> : vector<8xi8>
// CHECK: %[[T0:.*]] = vector.load %[[X]][%{{.*}}] : memref<25x8xi8>, vector<8xi8>
// CHECK-NEXT: %[[M0:.*]] = arith.maxui %[[LOW]], %[[T0]] : vector<8xi8>
// CHECK-COUNT-8: arith.maxui
// CHECK: vector.store %{{.*}}, %[[Y]][%[[OUT:.*]], %{{.*}}] : memref<9x8xi8>, vector<8xi8>
// CHECK-NEXT: } else {
// CHECK: %[[LOW2:.*]] = arith.constant dense<0> : vector<8xi8>
// CHECK: %[[IN:.*]] = scf.if %{{.*}} -> (vector<8xi8>) {
// CHECK-NEXT: %[[T:.*]] = vector.load %[[X]][%{{.*}}] : memref<25x8xi8>, vector<8xi8>
// CHECK-NEXT: %[[M:.*]] = arith.maxui %[[LOW2]], %[[T]] : vector<8xi8>
// CHECK-NEXT: scf.yield %[[M]] : vector<8xi8>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[LOW2]] : vector<8xi8>
// CHECK: vector.store %{{.*}}, %[[Y]][%[[OUT]], %{{.*}}] : memref<9x8xi8>, vector<8xi8>
// CHECK-LABEL: func.func @pool
// CHECK: %[[CODES:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[1,5,5,8],ui8>) -> tensor<1x5x5x8xi8>
// CHECK: %[[PIXELS:.*]] = tensor.collapse_shape %[[CODES]] {{\[\[}}0, 1, 2], [3]] : tensor<1x5x5x8xi8> into tensor<25x8xi8>
// CHECK: %[[P:.*]] = "flow.dispatch"(%{{[^,]+}}, %[[PIXELS]], %{{[^)]+}}) {entry_points = [@[[K]]::@[[K]]]{{.*}} -> tensor<9x8xi8>
// CHECK: %[[OUT4:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 3, 3, 8] : tensor<9x8xi8> into tensor<1x3x3x8xi8>
// CHECK: "torch_c.from_builtin_tensor"(%[[OUT4]]) : (tensor<1x3x3x8xi8>) -> !torch.vtensor<[1,3,3,8],ui8>
// CHECK-NOT: onnx.NhwcMaxPool
func.func @pool(%x: !torch.vtensor<[1,5,5,8],ui8>) -> !torch.vtensor<[1,3,3,8],ui8> {
  %y = "torch.operator"(%x) <{name = "onnx.NhwcMaxPool"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]} : (!torch.vtensor<[1,5,5,8],ui8>) -> !torch.vtensor<[1,3,3,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,3,3,8],ui8>) -> ()
}

// -----

// int8 codes compared signed from -128; 80 channels: a vector of 64, then one of 16.
// CHECK-LABEL: func.func @dq_maxpool_i8_n1_h4_w4_c80_k2x2_s2x2(
// CHECK: arith.constant dense<-128> : vector<64xi8>
// CHECK: arith.maxsi %{{.*}} : vector<64xi8>
// CHECK: arith.constant dense<-128> : vector<16xi8>
// CHECK: arith.maxsi %{{.*}} : vector<16xi8>
func.func @signed(%x: !torch.vtensor<[1,4,4,80],si8>) -> !torch.vtensor<[1,2,2,80],si8> {
  %y = "torch.operator"(%x) <{name = "onnx.NhwcMaxPool"}> {torch.onnx.kernel_shape = [2 : si64, 2 : si64], torch.onnx.strides = [2 : si64, 2 : si64]} : (!torch.vtensor<[1,4,4,80],si8>) -> !torch.vtensor<[1,2,2,80],si8>
  "func.return"(%y) : (!torch.vtensor<[1,2,2,80],si8>) -> ()
}
