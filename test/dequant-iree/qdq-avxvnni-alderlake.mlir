// A QDQ MatMul through the CPU pipeline for an AVX-VNNI host without AVX-512: the module tagged
// dq.avx2 and dq.avxvnni (as dq-target-features tags alderlake; tagged, the pass leaves it) takes
// dq's 8-lane vpdpbusd kernel (passes/kernels/qdq_avxvnni.py), and IREE compiles it for
// --iree-llvmcpu-target-cpu=alderlake: its products are VEX-encoded vpdpbusd on ymm registers,
// with no AVX-512 instruction (no zmm register), which LLVM selects only for a target with
// AVX-VNNI. (128 x 64 x 64: MIN_INTEGER_MACS, 2^19.) Compiled, not run: no host needed.
// REQUIRES: iree
// RUN: rm -rf %t.dump
// RUN: dequant-opt %s --allow-unregistered-dialect --torch-onnx-to-iree -o %t.mlir
// RUN: FileCheck %s --check-prefix=STAGE < %t.mlir
// RUN: %python -m iree.compiler.tools.scripts.iree_compile %t.mlir --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=alderlake --iree-hal-dump-executable-files-to=%t.dump -o %t.vmfb
// RUN: cat %t.dump/*.s | FileCheck %s --check-prefix=ASM

// STAGE: func.func @[[K:dq_matmul_qdq_avxvnni_u8_i8_k64_n64]](
// STAGE-NOT: pmadd
// STAGE-LABEL: func.func @uint8_activation
// STAGE: "flow.dispatch"({{.*}}entry_points = [@[[K]]::@[[K]]]
// STAGE-NOT: onnx.MatMul
// ASM-NOT: zmm
// ASM: dq_matmul_qdq_avxvnni_u8_i8_k64_n64:
// ASM-NOT: zmm
// ASM: {vex} vpdpbusd %ymm{{[0-9]+}}, %ymm{{[0-9]+}}, %ymm{{[0-9]+}}
// ASM-NOT: zmm
module attributes {dq.avx2, dq.avxvnni} {
func.func @uint8_activation(%a: !torch.vtensor<[128,64],f32>) -> !torch.vtensor<[128,64],f32> attributes {torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 21 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""} {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[128,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[128,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[128,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[128,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[128,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[128,64],f32>
  "func.return"(%y) : (!torch.vtensor<[128,64],f32>) -> ()
}
}
