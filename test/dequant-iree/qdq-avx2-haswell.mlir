// QDQ MatMuls through the CPU pipeline for an AVX2 host: the module tagged dq.avx2 alone (as
// dq-target-features tags haswell or znver2; tagged, the pass leaves it) takes dq's three AVX2
// forms: for int8 weights without a zero point, the sign-split vpmaddubsw form
// (passes/kernels/qdq_avxvnni.py, QdqAvx2SignKernel) for weights of 100, whose pairs of rows
// could saturate vpmaddubsw of x as it is, and the direct vpmaddubsw form (QdqAvx2BytesKernel)
// for weights of 3; the vpmaddwd kernel (passes/kernels/qdq_avx2.py) for weights with a zero
// point. IREE compiles all three for --iree-llvmcpu-target-cpu=haswell, which has no AVX-512:
// the kernels' bodies are AVX2 code. (128 x 64 x 64: MIN_INTEGER_MACS, 2^19; 128 rows: the
// sign-split form's 64 columns one workgroup, `_w64`, WIDE_ROWS.)
// REQUIRES: iree
// RUN: dequant-opt %s --allow-unregistered-dialect --torch-onnx-to-iree -o %t.mlir
// RUN: FileCheck %s --check-prefix=STAGE < %t.mlir
// RUN: %python -m iree.compiler.tools.scripts.iree_compile %t.mlir --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=haswell --compile-to=executable-targets -o - | FileCheck %s --check-prefix=LLVM

// STAGE-DAG: func.func @[[S:dq_matmul_qdq_avx2s_u8_i8_k64_n64_w64]](
// STAGE-DAG: func.func @[[B:dq_matmul_qdq_avx2b_u8_i8_k64_n64_f0]](
// STAGE-DAG: func.func @[[K:dq_matmul_qdq_avx2_u8_i8_k64_n64_z]](
// STAGE-NOT: vpdpbusd
// STAGE-LABEL: func.func @uint8_activation
// STAGE: "flow.dispatch"({{.*}}entry_points = [@[[S]]::@[[S]]]
// STAGE: "flow.dispatch"({{.*}}entry_points = [@[[B]]::@[[B]]]
// STAGE: "flow.dispatch"({{.*}}entry_points = [@[[K]]::@[[K]]]
// STAGE-NOT: onnx.MatMul
// LLVM-DAG: llvm.x86.avx2.pmadd.wd
// LLVM-DAG: llvm.x86.avx2.pmadd.ub.sw
// LLVM-NOT: avx512
module attributes {dq.avx2} {
func.func @uint8_activation(%a: !torch.vtensor<[128,64],f32>) -> !torch.vtensor<[128,64],f32> attributes {torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 21 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""} {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<100> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %w3 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[128,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[128,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[128,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[128,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[128,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[128,64],f32>
  %wf3 = "torch.operator"(%w3, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y3 = "torch.operator"(%xf, %wf3) <{name = "onnx.MatMul"}> : (!torch.vtensor<[128,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[128,64],f32>
  %wz = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<5> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %swz = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %wfz = "torch.operator"(%wz, %swz, %zw) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[64,64],f32>
  %yz = "torch.operator"(%xf, %wfz) <{name = "onnx.MatMul"}> : (!torch.vtensor<[128,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[128,64],f32>
  %sum = "torch.operator"(%y, %y3) <{name = "onnx.Add"}> : (!torch.vtensor<[128,64],f32>, !torch.vtensor<[128,64],f32>) -> !torch.vtensor<[128,64],f32>
  %all = "torch.operator"(%sum, %yz) <{name = "onnx.Add"}> : (!torch.vtensor<[128,64],f32>, !torch.vtensor<[128,64],f32>) -> !torch.vtensor<[128,64],f32>
  "func.return"(%all) : (!torch.vtensor<[128,64],f32>) -> ()
}
}
