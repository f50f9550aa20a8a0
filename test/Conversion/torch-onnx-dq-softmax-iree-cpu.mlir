// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-dq-softmax-iree-cpu | FileCheck %s

// torch-onnx-dq-softmax-iree-cpu: the stage's dequant.QdqSoftmax node (python/qdq_softmax.py) as
// one dispatch of dq's softmax kernel (passes/kernels/softmax.py). [2, 3, 20] uint8 codes: 6
// rows of 20, one workgroup a row; per row the largest code (8 lanes over 16 codes, then the 4
// left), each code's exponential t[max - x] (a gather over 8 lanes, then one by one) into a stack
// buffer and summed, then (e / s) / sy clamped to [0 - zy, 255 - zy], rounded half to even
// (+-1.5 * 2^23), plus zy. t: exp(-d * 0.5) for d = 0 ... 255 (1.0, 0x3F1B4598 = 0.60653067,
// ...); r = [sy, zy].
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[SIX:.*]] = arith.constant 6 : index
// CHECK: "stream.return"(%[[SIX]], %{{.*}}, %{{.*}}) : (index, index, index) -> ()
// CHECK: func.func @dq_softmax_u8_u8_l20_w6(
// CHECK: %[[E:.*]] = memref.alloca() : memref<20xf32>
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x20xi8>
// CHECK-DAG: %[[T:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<256xf32>
// CHECK-DAG: %[[R:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<2xf32>
// CHECK: %[[SY:.*]] = memref.load %[[R]][%{{.*}}] : memref<2xf32>
// CHECK: %[[ZY:.*]] = memref.load %[[R]][%{{.*}}] : memref<2xf32>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[LANES:.*]] = scf.for %{{.*}} iter_args(%[[M:.*]] = %{{.*}}) -> (vector<8xi32>) {
// CHECK: %[[C:.*]] = arith.extui %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: arith.maxsi %[[M]], %[[C]] : vector<8xi32>
// CHECK: %[[TOP:.*]] = vector.reduction <maxsi>, %[[LANES]] : vector<8xi32> into i32
// CHECK: %[[MOST:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[TOP]]) -> (i32) {
// CHECK: %[[VMOST:.*]] = vector.broadcast %[[MOST]] : i32 to vector<8xi32>
// CHECK: %[[SUMS:.*]] = scf.for %[[K:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8xf32>) {
// CHECK: %[[D:.*]] = arith.subi %[[VMOST]], %{{.*}} : vector<8xi32>
// CHECK: %[[EK:.*]] = vector.gather %[[T]][%{{.*}}] [%[[D]]], %{{.*}}, %{{.*}} : memref<256xf32>, vector<8xi32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: vector.store %[[EK]], %[[E]][%[[K]]] : memref<20xf32>, vector<8xf32>
// CHECK: arith.addf %[[ACC]], %[[EK]] : vector<8xf32>
// CHECK: %[[LANESUM:.*]] = vector.reduction <add>, %[[SUMS]] : vector<8xf32> into f32
// CHECK: %[[S:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[LANESUM]]) -> (f32) {
// CHECK: memref.load %[[T]][%{{.*}}] : memref<256xf32>
// CHECK: %[[VS:.*]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK: %[[EV:.*]] = vector.load %[[E]][%{{.*}}] : memref<20xf32>, vector<8xf32>
// CHECK: %[[P:.*]] = arith.divf %[[EV]], %[[VS]] : vector<8xf32>
// CHECK: %[[Q:.*]] = arith.divf %[[P]], %{{.*}} : vector<8xf32>
// CHECK: arith.maximumf %[[Q]], %{{.*}} fastmath<nnan,nsz> : vector<8xf32>
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.trunci %{{.*}} : vector<8xi32> to vector<8xi8>
// CHECK: %[[TAIL:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK: arith.divf %[[TAIL]], %[[SY]] : f32
// CHECK-LABEL: func.func @softmax
// CHECK: %[[CODES:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[2,3,20],ui8>) -> tensor<2x3x20xi8>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[CODES]] {{\[}}[0, 1], [2]] : tensor<2x3x20xi8> into tensor<6x20xi8>
// CHECK: %[[TABLE:.*]] = arith.constant dense<"0x0000803F98451B3F{{[0-9A-F]+}}"> : tensor<256xf32>
// CHECK: %[[PARAMS:.*]] = arith.constant dense<[3.906250e-03, 0.000000e+00]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = "flow.dispatch"(%{{.*}}, %[[ROWS]], %[[TABLE]], %[[PARAMS]], %{{.*}}) {entry_points = [@dq_softmax_u8_u8_l20_w6::@dq_softmax_u8_u8_l20_w6]
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 3, 20] : tensor<6x20xi8> into tensor<2x3x20xi8>
// CHECK: "torch_c.from_builtin_tensor"(%[[OUT]]) : (tensor<2x3x20xi8>) -> !torch.vtensor<[2,3,20],ui8>
func.func @softmax(%x: !torch.vtensor<[2,3,20],ui8>) -> !torch.vtensor<[2,3,20],ui8> {
  %y = "torch.operator"(%x) <{name = "onnx.QdqSoftmax"}> {torch.onnx.x_scale = 5.000000e-01 : f32, torch.onnx.y_scale = 3.906250e-03 : f32, torch.onnx.y_zero_point = 0 : si64} : (!torch.vtensor<[2,3,20],ui8>) -> !torch.vtensor<[2,3,20],ui8>
  "func.return"(%y) : (!torch.vtensor<[2,3,20],ui8>) -> ()
}

// -----

// int8 codes in and out, rows known at run time: eight workgroups, the largest code from -128,
// the codes sign-extended, the clamp [-128 - zy, 127 - zy]; 16 codes a row, no tail.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @dq_softmax_i8_i8_l16_w8(
// CHECK: arith.constant dense<-128> : vector<8xi32>
// CHECK: arith.constant -1.280000e+02 : f32
// CHECK: arith.constant 1.270000e+02 : f32
// CHECK: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK-LABEL: func.func @signed
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %[[C0]] : tensor<?x16xi8>
// CHECK: "flow.dispatch"(%[[N]], %{{.*}}) {entry_points = [@dq_softmax_i8_i8_l16_w8::@dq_softmax_i8_i8_l16_w8]
func.func @signed(%x: !torch.vtensor<[?,16],si8>) -> !torch.vtensor<[?,16],si8> {
  %y = "torch.operator"(%x) <{name = "onnx.QdqSoftmax"}> {torch.onnx.x_scale = 1.000000e-01 : f32, torch.onnx.y_scale = 3.906250e-03 : f32, torch.onnx.y_zero_point = -128 : si64} : (!torch.vtensor<[?,16],si8>) -> !torch.vtensor<[?,16],si8>
  "func.return"(%y) : (!torch.vtensor<[?,16],si8>) -> ()
}

// -----

// ONNX's own Softmax of f32 on a module tagged for an AVX2 CPU: one dispatch of dq's float
// softmax kernel, 8 lanes. [2, 3, 20] f32: 6 rows of 20, one workgroup a row; per row the largest
// value (x86's vmaxps over 8 lanes, the lanes by rotated halves, then maxnum over the 4 left),
// each exp(x - max) into y (f32 FMAs, x - max clamped at -104, 2^(j/8) from a table of 8 by a
// permute, the NaN of x - max kept) and summed (8 lanes, then the lanes by halves, then the
// tail), then y / s.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @dq_softmax_f32_l20_v8_w6(
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x20xf32>
// CHECK-DAG: %[[Y:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x20xf32>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[LANES:.*]] = scf.for %{{.*}} iter_args(%[[M:.*]] = %{{.*}}) -> (vector<8xf32>) {
// CHECK: llvm.call_intrinsic "llvm.x86.avx.max.ps.256"(%{{.*}}, %[[M]]) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: %[[HALF:.*]] = vector.shuffle %[[LANES]], %[[LANES]] [4, 5, 6, 7, 0, 1, 2, 3] : vector<8xf32>, vector<8xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx.max.ps.256"(%[[HALF]], %[[LANES]])
// CHECK: vector.shuffle %{{.*}} [2, 3, 4, 5, 6, 7, 0, 1]
// CHECK: vector.shuffle %{{.*}} [1, 2, 3, 4, 5, 6, 7, 0]
// CHECK: %[[TOP:.*]] = vector.extract %{{.*}}[0] : f32 from vector<8xf32>
// CHECK: %[[MOST:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[TOP]]) -> (f32) {
// CHECK: arith.maxnumf %{{.*}} : f32
// CHECK: %[[VMOST:.*]] = vector.broadcast %[[MOST]] : f32 to vector<8xf32>
// CHECK: %[[SUMS:.*]] = scf.for %[[K:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8xf32>) {
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[VMOST]] : vector<8xf32>
// CHECK: %[[C:.*]] = arith.maxnumf %[[D]], %{{.*}} : vector<8xf32>
// CHECK: %[[T:.*]] = math.fma %[[C]], %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx2.permps"
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[D]], %[[D]] : vector<8xf32>
// CHECK: %[[EK0:.*]] = arith.select %[[NAN]], %[[D]], %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: %[[EK:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[EK0]])
// CHECK: vector.store %[[EK]], %[[Y]][%[[ROW]], %[[K]]] : memref<?x20xf32>, vector<8xf32>
// CHECK: arith.addf %[[ACC]], %[[EK]] : vector<8xf32>
// CHECK: %[[LANESUM:.*]] = vector.reduction <add>, %[[SUMS]] : vector<8xf32> into f32
// CHECK: %[[S:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[LANESUM]]) -> (f32) {
// CHECK: vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK: %[[VS:.*]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK: arith.divf %{{.*}}, %[[VS]] : vector<8xf32>
// CHECK: arith.divf %{{.*}}, %[[S]] : f32
// CHECK-LABEL: func.func @float
// CHECK: %[[VALUES:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[2,3,20],f32>) -> tensor<2x3x20xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[VALUES]] {{\[}}[0, 1], [2]] : tensor<2x3x20xf32> into tensor<6x20xf32>
// CHECK: %[[OUT:.*]] = "flow.dispatch"(%{{.*}}, %[[ROWS]], %{{.*}}) {entry_points = [@dq_softmax_f32_l20_v8_w6::@dq_softmax_f32_l20_v8_w6]
// CHECK: tensor.expand_shape %[[OUT]] {{\[}}[0, 1], [2]] output_shape [2, 3, 20] : tensor<6x20xf32> into tensor<2x3x20xf32>
// CHECK-NOT: onnx.Softmax
module attributes {dq.avx2} {
  func.func @float(%x: !torch.vtensor<[2,3,20],f32>) -> !torch.vtensor<[2,3,20],f32> attributes {torch.onnx_meta.opset_version = 21 : si64} {
    %y = "torch.operator"(%x) <{name = "onnx.Softmax"}> {torch.onnx.axis = -1 : si64} : (!torch.vtensor<[2,3,20],f32>) -> !torch.vtensor<[2,3,20],f32>
    "func.return"(%y) : (!torch.vtensor<[2,3,20],f32>) -> ()
  }
}

// -----

// With AVX-512 (16 lanes), rows known at run time: eight workgroups. Before opset 13 the default
// axis is 1, the last of a 2-D input: taken too.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @dq_softmax_f32_l48_v16_w8(
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.max.ps.512"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<16xf32>, i32) -> vector<16xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.permvar.sf.512"
// CHECK-LABEL: func.func @wide
// CHECK: "flow.dispatch"(%{{.*}}) {entry_points = [@dq_softmax_f32_l48_v16_w8::@dq_softmax_f32_l48_v16_w8]
module attributes {dq.avx512bw, dq.avx2} {
  func.func @wide(%x: !torch.vtensor<[?,48],f32>) -> !torch.vtensor<[?,48],f32> attributes {torch.onnx_meta.opset_version = 11 : si64} {
    %y = "torch.operator"(%x) <{name = "onnx.Softmax"}> : (!torch.vtensor<[?,48],f32>) -> !torch.vtensor<[?,48],f32>
    "func.return"(%y) : (!torch.vtensor<[?,48],f32>) -> ()
  }
}

// -----

// Softmaxes IREE keeps: on a module without x86 tags; then, tagged for AVX2, over an axis other
// than the last (0 of a 2-D input, 1 of a 3-D one), of f16, of rows longer than 4096 values.
// CHECK-LABEL: func.func @untagged
// CHECK: "torch.operator"(%{{.*}}) <{name = "onnx.Softmax"}>
module {
  func.func @untagged(%x: !torch.vtensor<[2,20],f32>) -> !torch.vtensor<[2,20],f32> attributes {torch.onnx_meta.opset_version = 21 : si64} {
    %y = "torch.operator"(%x) <{name = "onnx.Softmax"}> : (!torch.vtensor<[2,20],f32>) -> !torch.vtensor<[2,20],f32>
    "func.return"(%y) : (!torch.vtensor<[2,20],f32>) -> ()
  }
}

// -----

// CHECK-NOT: stream.executable
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: <{name = "onnx.Softmax"}>
module attributes {dq.avx2} {
  func.func @kept(%a: !torch.vtensor<[2,20],f32>, %b: !torch.vtensor<[2,3,20],f32>, %c: !torch.vtensor<[2,20],f16>, %d: !torch.vtensor<[2,4097],f32>) -> (!torch.vtensor<[2,20],f32>, !torch.vtensor<[2,20],f16>, !torch.vtensor<[2,4097],f32>) attributes {torch.onnx_meta.opset_version = 13 : si64} {
    %0 = "torch.operator"(%a) <{name = "onnx.Softmax"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[2,20],f32>) -> !torch.vtensor<[2,20],f32>
    %1 = "torch.operator"(%c) <{name = "onnx.Softmax"}> : (!torch.vtensor<[2,20],f16>) -> !torch.vtensor<[2,20],f16>
    %2 = "torch.operator"(%d) <{name = "onnx.Softmax"}> : (!torch.vtensor<[2,4097],f32>) -> !torch.vtensor<[2,4097],f32>
    %3 = "torch.operator"(%b) <{name = "onnx.Softmax"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[2,3,20],f32>) -> !torch.vtensor<[2,3,20],f32>
    "func.return"(%0, %1, %2) : (!torch.vtensor<[2,20],f32>, !torch.vtensor<[2,20],f16>, !torch.vtensor<[2,4097],f32>) -> ()
  }
}
