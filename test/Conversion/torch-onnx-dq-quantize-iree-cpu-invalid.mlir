// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics --torch-onnx-dq-quantize-iree-cpu

// The node has no other lowering: one the kernel cannot take is an error at its location naming the rule.

func.func @zero_scale(%x: !torch.vtensor<[1,3,4,8],f32>) -> !torch.vtensor<[1,4,8,3],ui8> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.000000e+00> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.NhwcQuantizeLinear: its scale 0.0 must be finite and not 0}}
  %y = "torch.operator"(%x, %s, %z) <{name = "onnx.NhwcQuantizeLinear"}> : (!torch.vtensor<[1,3,4,8],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,4,8,3],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,4,8,3],ui8>) -> ()
}

// -----

func.func @zero_point_out_of_range(%x: !torch.vtensor<[1,3,4,8],f32>) -> !torch.vtensor<[1,4,8,3],si8> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<2.500000e-01> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<200> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.NhwcQuantizeLinear: its zero point 200 is outside its codes' range [-128, 127]}}
  %y = "torch.operator"(%x, %s, %z) <{name = "onnx.NhwcQuantizeLinear"}> : (!torch.vtensor<[1,3,4,8],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,4,8,3],si8>
  "func.return"(%y) : (!torch.vtensor<[1,4,8,3],si8>) -> ()
}

// -----

func.func @feature_map(%x: !torch.vtensor<[1,16,4,8],f32>) -> !torch.vtensor<[1,4,8,16],ui8> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<2.500000e-01> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  // expected-error@+1 {{dequant.NhwcQuantizeLinear: C = 16 channels: the kernel interleaves at most 8 (an image's)}}
  %y = "torch.operator"(%x, %s) <{name = "onnx.NhwcQuantizeLinear"}> : (!torch.vtensor<[1,16,4,8],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[1,4,8,16],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,4,8,16],ui8>) -> ()
}

// -----

func.func @output_shape(%x: !torch.vtensor<[1,3,4,8],f32>) -> !torch.vtensor<[1,3,4,8],ui8> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<2.500000e-01> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  // expected-error@+1 {{dequant.NhwcQuantizeLinear: its output is [1, 3, 4, 8], not [1, 4, 8, 3]}}
  %y = "torch.operator"(%x, %s) <{name = "onnx.NhwcQuantizeLinear"}> : (!torch.vtensor<[1,3,4,8],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[1,3,4,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,3,4,8],ui8>) -> ()
}

// -----

func.func @run_time_scale(%x: !torch.vtensor<[1,3,4,8],f32>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[1,4,8,3],ui8> {
  // expected-error@+1 {{dequant.NhwcQuantizeLinear: its scale and zero point must be constants of one value}}
  %y = "torch.operator"(%x, %s) <{name = "onnx.NhwcQuantizeLinear"}> : (!torch.vtensor<[1,3,4,8],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[1,4,8,3],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,4,8,3],ui8>) -> ()
}
