// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics --torch-onnx-dq-maxpool-iree-cpu

// The node has no other lowering: one the kernel cannot take is an error at its location naming the rule.

func.func @pads_of_a_whole_window(%x: !torch.vtensor<[1,5,5,8],ui8>) -> !torch.vtensor<[1,4,4,8],ui8> {
  // expected-error@+1 {{dequant.NhwcMaxPool: its pads [2, 2, 2, 2] must be less than its 2 x 2 window (a window of padding alone has no value)}}
  %y = "torch.operator"(%x) <{name = "onnx.NhwcMaxPool"}> {torch.onnx.kernel_shape = [2 : si64, 2 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [2 : si64, 2 : si64, 2 : si64, 2 : si64]} : (!torch.vtensor<[1,5,5,8],ui8>) -> !torch.vtensor<[1,4,4,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,4,4,8],ui8>) -> ()
}

// -----

func.func @output_shape(%x: !torch.vtensor<[1,5,5,8],ui8>) -> !torch.vtensor<[1,2,2,8],ui8> {
  // expected-error@+1 {{dequant.NhwcMaxPool: its output is [1, 2, 2, 8], not [1, 3, 3, 8]}}
  %y = "torch.operator"(%x) <{name = "onnx.NhwcMaxPool"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]} : (!torch.vtensor<[1,5,5,8],ui8>) -> !torch.vtensor<[1,2,2,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,2,2,8],ui8>) -> ()
}

// -----

func.func @float_values(%x: !torch.vtensor<[1,5,5,8],f32>) -> !torch.vtensor<[1,3,3,8],f32> {
  // expected-error@+1 {{dequant.NhwcMaxPool: its input and output must be 8-bit integer codes of one type}}
  %y = "torch.operator"(%x) <{name = "onnx.NhwcMaxPool"}> {torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.strides = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]} : (!torch.vtensor<[1,5,5,8],f32>) -> !torch.vtensor<[1,3,3,8],f32>
  "func.return"(%y) : (!torch.vtensor<[1,3,3,8],f32>) -> ()
}

// -----

func.func @one_dimensional(%x: !torch.vtensor<[1,5,5,8],ui8>) -> !torch.vtensor<[1,3,3,8],ui8> {
  // expected-error@+1 {{dequant.NhwcMaxPool: its kernel_shape [3], strides [1, 1] and pads [0, 0, 0, 0] must have 2, 2 and 4 values}}
  %y = "torch.operator"(%x) <{name = "onnx.NhwcMaxPool"}> {torch.onnx.kernel_shape = [3 : si64]} : (!torch.vtensor<[1,5,5,8],ui8>) -> !torch.vtensor<[1,3,3,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,3,3,8],ui8>) -> ()
}
