// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq-iree --torch-onnx-dq-matmul-iree-cpu --torch-onnx-dq-depthwise-iree-cpu --torch-onnx-dq-lookup-iree-cpu | FileCheck %s

// A table lookup of 8-bit codes, Gather(T, Cast<int32>(codes) [+ 128 for int8]) of a constant T
// of 256 codes (python/qdq_tables.py writes an activation between a DequantizeLinear and a
// QuantizeLinear so), as the IREE stage's kernel passes take it: in the epilogue of the kernel
// making the codes, else as a dispatch of dq's lookup kernel. T here is 0, 1, ..., 255: the
// kernels read it in the order of the codes' bytes, so for int8 codes (index c + 128) the table
// they take is 128, ..., 255, 0, ..., 127 (0x8081...FF0001...7F).

// The AVX2 QDQ kernel's epilogue (its vpmaddubsw form: weights whose pairs cannot saturate): its requantize to int8, then the lookup by vpshufb of the
// table's 16 rows chosen by the codes' high nibble (passes/kernels/qdq.py, `looked_up`); the
// Cast, Add and Gather are gone and the dispatch stands for the Gather (uint8 codes).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_avx2b_u8_i8_k64_n256_qi8_t_rcp_bd_f0]]
// CHECK: %[[T:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<256xi8>
// CHECK: math.fma
// CHECK: vector.load %[[T]][%{{[^]]+}}] : memref<256xi8>, vector<16xi8>
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"
// CHECK-COUNT-15: arith.select
// CHECK-LABEL: func.func @matmul_lookup
// CHECK: %[[TC:.*]] = arith.constant dense<"0x808182{{.*}}FDFEFF000102{{.*}}7D7E7F"> : tensor<256xi8>
// CHECK: "flow.dispatch"({{.*}}, %[[TC]], %{{[^)]+}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: -> tensor<32x256xi8>
// CHECK: "torch_c.from_builtin_tensor"(%{{.*}}) : (tensor<32x256xi8>) -> !torch.vtensor<[32,256],ui8>
// CHECK-NOT: onnx.Cast
// CHECK-NOT: onnx.Gather
// CHECK: return
module attributes {dq.avx2} {
func.func @matmul_lookup(%a: !torch.vtensor<[32,64],f32>) -> !torch.vtensor<[32,256],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x256xsi8>} : () -> !torch.vtensor<[64,256],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.375> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-7> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %t = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255]> : tensor<256xui8>} : () -> !torch.vtensor<[256],ui8>
  %half = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<si32>} : () -> !torch.vtensor<[],si32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[32,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[64,256],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[32,64],f32>, !torch.vtensor<[64,256],f32>) -> !torch.vtensor<[32,256],f32>
  %yq = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[32,256],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[32,256],si8>
  %i = "torch.operator"(%yq) <{name = "onnx.Cast"}> {torch.onnx.to = 6 : si64} : (!torch.vtensor<[32,256],si8>) -> !torch.vtensor<[32,256],si32>
  %j = "torch.operator"(%i, %half) <{name = "onnx.Add"}> : (!torch.vtensor<[32,256],si32>, !torch.vtensor<[],si32>) -> !torch.vtensor<[32,256],si32>
  %g = "torch.operator"(%t, %j) <{name = "onnx.Gather"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[256],ui8>, !torch.vtensor<[32,256],si32>) -> !torch.vtensor<[32,256],ui8>
  "func.return"(%g) : (!torch.vtensor<[32,256],ui8>) -> ()
}
}

// -----

// The VNNI QDQ kernel's epilogue: 16 lanes, two of its byte vectors a lookup's 32 bytes.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n256_qi8_t_rcp]]
// CHECK: memref<256xi8>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xi8>, vector<16xi8>
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx2.pshuf.b"
// CHECK-LABEL: func.func @matmul_lookup_vnni
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-NOT: onnx.Gather
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @matmul_lookup_vnni(%a: !torch.vtensor<[32,64],f32>) -> !torch.vtensor<[32,256],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x256xsi8>} : () -> !torch.vtensor<[64,256],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.375> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-7> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %t = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255]> : tensor<256xui8>} : () -> !torch.vtensor<[256],ui8>
  %half = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<si32>} : () -> !torch.vtensor<[],si32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[32,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[64,256],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[32,64],f32>, !torch.vtensor<[64,256],f32>) -> !torch.vtensor<[32,256],f32>
  %yq = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[32,256],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[32,256],si8>
  %i = "torch.operator"(%yq) <{name = "onnx.Cast"}> {torch.onnx.to = 6 : si64} : (!torch.vtensor<[32,256],si8>) -> !torch.vtensor<[32,256],si32>
  %j = "torch.operator"(%i, %half) <{name = "onnx.Add"}> : (!torch.vtensor<[32,256],si32>, !torch.vtensor<[],si32>) -> !torch.vtensor<[32,256],si32>
  %g = "torch.operator"(%t, %j) <{name = "onnx.Gather"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[256],ui8>, !torch.vtensor<[32,256],si32>) -> !torch.vtensor<[32,256],ui8>
  "func.return"(%g) : (!torch.vtensor<[32,256],ui8>) -> ()
}
}


// -----

// The depthwise kernel: each output row's bytes through the table after the row (scalar loads:
// the row's sums hold the vector registers), uint8 codes read as they are; T here is -128, ...,
// 127 (int8 codes out: 0x80...FF00...7F).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_depthwise_u8_qu8_n1_h6_w6_c8_k3x3_s2x2_t_rcp_bd]](
// CHECK: %[[T:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<256xi8>
// CHECK: %[[Y:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1x2x2x8xi8>
// CHECK: vector.store %{{.*}}, %[[Y]]
// CHECK: %[[C:.*]] = memref.load %[[Y]]
// CHECK-NEXT: %[[W:.*]] = arith.extui %[[C]] : i8 to i32
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[W]] : i32 to index
// CHECK-NEXT: %[[E:.*]] = memref.load %[[T]][%[[I]]] : memref<256xi8>
// CHECK-NEXT: memref.store %[[E]], %[[Y]]
// CHECK-LABEL: func.func @depthwise_lookup
// CHECK: %[[TC:.*]] = arith.constant dense<"0x808182{{.*}}FDFEFF000102{{.*}}7D7E7F"> : tensor<256xi8>
// CHECK: "flow.dispatch"({{.*}}, %[[TC]], %{{[^)]+}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK: "torch_c.from_builtin_tensor"(%{{.*}}) : (tensor<1x2x2x8xi8>) -> !torch.vtensor<[1,2,2,8],si8>
// CHECK-NOT: onnx.Gather
// CHECK: return
module attributes {dq.avx2} {
func.func @depthwise_lookup(%x: !torch.vtensor<[1,6,6,8],ui8>) -> !torch.vtensor<[1,2,2,8],si8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<3x3x8xsi8>} : () -> !torch.vtensor<[3,3,8],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1> : tensor<8xsi8>} : () -> !torch.vtensor<[8],si8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.1> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<120> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %t8 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[-128, -127, -126, -125, -124, -123, -122, -121, -120, -119, -118, -117, -116, -115, -114, -113, -112, -111, -110, -109, -108, -107, -106, -105, -104, -103, -102, -101, -100, -99, -98, -97, -96, -95, -94, -93, -92, -91, -90, -89, -88, -87, -86, -85, -84, -83, -82, -81, -80, -79, -78, -77, -76, -75, -74, -73, -72, -71, -70, -69, -68, -67, -66, -65, -64, -63, -62, -61, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127]> : tensor<256xsi8>} : () -> !torch.vtensor<[256],si8>
  %y = "torch.operator"(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy) <{name = "onnx.QLinearDepthwiseConv"}> {torch.onnx.strides = [2 : si64, 2 : si64]} : (!torch.vtensor<[1,6,6,8],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[3,3,8],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,2,2,8],ui8>
  %i = "torch.operator"(%y) <{name = "onnx.Cast"}> {torch.onnx.to = 6 : si64} : (!torch.vtensor<[1,2,2,8],ui8>) -> !torch.vtensor<[1,2,2,8],si32>
  %g = "torch.operator"(%t8, %i) <{name = "onnx.Gather"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[256],si8>, !torch.vtensor<[1,2,2,8],si32>) -> !torch.vtensor<[1,2,2,8],si8>
  "func.return"(%g) : (!torch.vtensor<[1,2,2,8],si8>) -> ()
}
}

// -----

// Codes no kernel of dq's makes (IREE's QuantizeLinear of the argument): one dispatch of dq's
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
