// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics --torch-onnx-dq-im2col-iree-cpu

// The node has no other lowering: one the kernel cannot take is an error at its location naming the rule.

func.func @zero_point_not_constant(%x: !torch.vtensor<[1,5,5,3],ui8>, %zx: !torch.vtensor<[],ui8>) -> !torch.vtensor<[9,32],ui8> {
  // expected-error@+1 {{dequant.Im2col: its zero point must be a constant scalar of the model}}
  %y = "torch.operator"(%x, %zx) <{name = "onnx.Im2col"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.columns = 32 : si64} : (!torch.vtensor<[1,5,5,3],ui8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[9,32],ui8>
  "func.return"(%y) : (!torch.vtensor<[9,32],ui8>) -> ()
}

// -----

func.func @rows_too_short(%x: !torch.vtensor<[1,5,5,3],ui8>) -> !torch.vtensor<[9,20],ui8> {
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.Im2col: its rows of 20 codes are shorter than its 3 x 3 x 3 taps}}
  %y = "torch.operator"(%x, %zx) <{name = "onnx.Im2col"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.columns = 20 : si64} : (!torch.vtensor<[1,5,5,3],ui8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[9,20],ui8>
  "func.return"(%y) : (!torch.vtensor<[9,20],ui8>) -> ()
}

// -----

func.func @output_shape(%x: !torch.vtensor<[1,5,5,3],ui8>) -> !torch.vtensor<[8,32],ui8> {
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.Im2col: its output is [8, 32], not [N * Ho * Wo, columns] = [9, 32]}}
  %y = "torch.operator"(%x, %zx) <{name = "onnx.Im2col"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.columns = 32 : si64} : (!torch.vtensor<[1,5,5,3],ui8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[8,32],ui8>
  "func.return"(%y) : (!torch.vtensor<[8,32],ui8>) -> ()
}

// -----

func.func @taps_past_the_padded_input(%x: !torch.vtensor<[1,2,2,3],ui8>) -> !torch.vtensor<[1,32],ui8> {
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.Im2col: its 3 x 3 taps do not fit its padded input}}
  %y = "torch.operator"(%x, %zx) <{name = "onnx.Im2col"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.columns = 32 : si64} : (!torch.vtensor<[1,2,2,3],ui8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,32],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,32],ui8>) -> ()
}

// -----

func.func @negative_pads(%x: !torch.vtensor<[1,5,5,3],ui8>) -> !torch.vtensor<[9,32],ui8> {
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.Im2col: its dims, taps and strides must be positive and its pads non-negative}}
  %y = "torch.operator"(%x, %zx) <{name = "onnx.Im2col"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, -1 : si64, 1 : si64, 1 : si64], torch.onnx.columns = 32 : si64} : (!torch.vtensor<[1,5,5,3],ui8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[9,32],ui8>
  "func.return"(%y) : (!torch.vtensor<[9,32],ui8>) -> ()
}

// -----

func.func @mixed_types(%x: !torch.vtensor<[1,5,5,3],ui8>) -> !torch.vtensor<[9,32],si8> {
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.Im2col: its input, zero point and output must be 8-bit integer codes of one type}}
  %y = "torch.operator"(%x, %zx) <{name = "onnx.Im2col"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], torch.onnx.columns = 32 : si64} : (!torch.vtensor<[1,5,5,3],ui8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[9,32],si8>
  "func.return"(%y) : (!torch.vtensor<[9,32],si8>) -> ()
}
