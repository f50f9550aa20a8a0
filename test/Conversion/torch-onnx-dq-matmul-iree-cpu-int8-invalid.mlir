// RUN: dequant-opt %s --allow-unregistered-dialect --verify-diagnostics --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu=int8-activations=true

// int8 activations asked for on a module whose target has AVX-512 but no VNNI (tagged by hand, so
// dq-target-features would leave it as it is): the kernel pass refuses it.
// expected-error@+1 {{int8 activations (int8-activations=true) need AVX-512 VNNI, which the target lacks (dq-target-features tags the module dq.avx512vnni where the host has it)}}
module attributes {dq.avx512bw} {
func.func @no_vnni(%a: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,64],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<8x64xsi8>} : () -> !torch.vtensor<[8,64],si8>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<1x64xf32>} : () -> !torch.vtensor<[1,64],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 8 : si64} : (!torch.vtensor<[8,64],si8>, !torch.vtensor<[1,64],f32>) -> !torch.vtensor<[8,64],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%2) : (!torch.vtensor<[?,64],f32>) -> ()
}
}
