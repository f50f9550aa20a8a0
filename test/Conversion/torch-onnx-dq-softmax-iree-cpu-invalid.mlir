// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics --torch-onnx-dq-softmax-iree-cpu

// The node has no other lowering: one the kernel cannot take is an error at its location naming the rule.

func.func @zero_scale(%x: !torch.vtensor<[4,16],ui8>) -> !torch.vtensor<[4,16],ui8> {
  // expected-error@+1 {{dequant.QdqSoftmax: its x_scale and y_scale must be positive f32 and its y_zero_point one of the output's codes (0 to 255)}}
  %y = "torch.operator"(%x) <{name = "onnx.QdqSoftmax"}> {torch.onnx.x_scale = 0.000000e+00 : f32, torch.onnx.y_scale = 3.906250e-03 : f32, torch.onnx.y_zero_point = 0 : si64} : (!torch.vtensor<[4,16],ui8>) -> !torch.vtensor<[4,16],ui8>
  "func.return"(%y) : (!torch.vtensor<[4,16],ui8>) -> ()
}

// -----

func.func @zero_point_of_another_type(%x: !torch.vtensor<[4,16],ui8>) -> !torch.vtensor<[4,16],si8> {
  // expected-error@+1 {{dequant.QdqSoftmax: its x_scale and y_scale must be positive f32 and its y_zero_point one of the output's codes (-128 to 127)}}
  %y = "torch.operator"(%x) <{name = "onnx.QdqSoftmax"}> {torch.onnx.x_scale = 1.000000e-01 : f32, torch.onnx.y_scale = 3.906250e-03 : f32, torch.onnx.y_zero_point = 200 : si64} : (!torch.vtensor<[4,16],ui8>) -> !torch.vtensor<[4,16],si8>
  "func.return"(%y) : (!torch.vtensor<[4,16],si8>) -> ()
}

// -----

func.func @rows_of_unknown_length(%x: !torch.vtensor<[4,?],ui8>) -> !torch.vtensor<[4,?],ui8> {
  // expected-error@+1 {{dequant.QdqSoftmax: its input and output must be codes of one shape, its last dim static}}
  %y = "torch.operator"(%x) <{name = "onnx.QdqSoftmax"}> {torch.onnx.x_scale = 1.000000e-01 : f32, torch.onnx.y_scale = 3.906250e-03 : f32, torch.onnx.y_zero_point = 0 : si64} : (!torch.vtensor<[4,?],ui8>) -> !torch.vtensor<[4,?],ui8>
  "func.return"(%y) : (!torch.vtensor<[4,?],ui8>) -> ()
}

// -----

func.func @float_values(%x: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32> {
  // expected-error@+1 {{dequant.QdqSoftmax: its input and output must be 8-bit integer codes}}
  %y = "torch.operator"(%x) <{name = "onnx.QdqSoftmax"}> {torch.onnx.x_scale = 1.000000e-01 : f32, torch.onnx.y_scale = 3.906250e-03 : f32, torch.onnx.y_zero_point = 0 : si64} : (!torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,16],f32>
  "func.return"(%y) : (!torch.vtensor<[4,16],f32>) -> ()
}

// -----

func.func @rows_too_long(%x: !torch.vtensor<[2,5000],ui8>) -> !torch.vtensor<[2,5000],ui8> {
  // expected-error@+1 {{dequant.QdqSoftmax: its rows are 5000 codes long (dq's softmax kernel takes 1 to 4096)}}
  %y = "torch.operator"(%x) <{name = "onnx.QdqSoftmax"}> {torch.onnx.x_scale = 1.000000e-01 : f32, torch.onnx.y_scale = 3.906250e-03 : f32, torch.onnx.y_zero_point = 0 : si64} : (!torch.vtensor<[2,5000],ui8>) -> !torch.vtensor<[2,5000],ui8>
  "func.return"(%y) : (!torch.vtensor<[2,5000],ui8>) -> ()
}

// -----

func.func @no_scale(%x: !torch.vtensor<[4,16],ui8>) -> !torch.vtensor<[4,16],ui8> {
  // expected-error@+1 {{dequant.QdqSoftmax: its x_scale and y_scale must be positive f32 and its y_zero_point one of the output's codes (0 to 255)}}
  %y = "torch.operator"(%x) <{name = "onnx.QdqSoftmax"}> {torch.onnx.y_scale = 3.906250e-03 : f32, torch.onnx.y_zero_point = 0 : si64} : (!torch.vtensor<[4,16],ui8>) -> !torch.vtensor<[4,16],ui8>
  "func.return"(%y) : (!torch.vtensor<[4,16],ui8>) -> ()
}
