// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --verify-diagnostics --torch-onnx-dq-depthwise-iree-cpu

// The node has no other lowering: one the kernel cannot take is an error at its location naming the rule.

func.func @scale_not_constant(%x: !torch.vtensor<[1,6,6,8],ui8>, %sx: !torch.vtensor<[],f32>) -> !torch.vtensor<[1,4,4,8],ui8> {
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<3x3x8xsi8>} : () -> !torch.vtensor<[3,3,8],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0> : tensor<8xsi8>} : () -> !torch.vtensor<[8],si8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.1> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<120> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.QLinearDepthwiseConv: its scales, zero points, weights and bias must be constants of the model}}
  %y = "torch.operator"(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy) <{name = "onnx.QLinearDepthwiseConv"}> : (!torch.vtensor<[1,6,6,8],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[3,3,8],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,4,4,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,4,4,8],ui8>) -> ()
}

// -----

func.func @channels(%x: !torch.vtensor<[1,6,6,12],ui8>) -> !torch.vtensor<[1,4,4,12],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<3x3x12xsi8>} : () -> !torch.vtensor<[3,3,12],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<12xf32>} : () -> !torch.vtensor<[12],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0> : tensor<12xsi8>} : () -> !torch.vtensor<[12],si8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.1> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<120> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.QLinearDepthwiseConv: 12 channels (the kernel takes multiples of 8)}}
  %y = "torch.operator"(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy) <{name = "onnx.QLinearDepthwiseConv"}> : (!torch.vtensor<[1,6,6,12],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[3,3,12],si8>, !torch.vtensor<[12],f32>, !torch.vtensor<[12],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,4,4,12],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,4,4,12],ui8>) -> ()
}

// -----

func.func @output_shape(%x: !torch.vtensor<[1,6,6,8],ui8>) -> !torch.vtensor<[1,3,3,8],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<3x3x8xsi8>} : () -> !torch.vtensor<[3,3,8],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0> : tensor<8xsi8>} : () -> !torch.vtensor<[8],si8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.1> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<120> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.QLinearDepthwiseConv: its output is [1, 3, 3, 8], not [1, 4, 4, 8]}}
  %y = "torch.operator"(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy) <{name = "onnx.QLinearDepthwiseConv"}> : (!torch.vtensor<[1,6,6,8],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[3,3,8],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,3,3,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,3,3,8],ui8>) -> ()
}

// -----

func.func @negative_pads(%x: !torch.vtensor<[1,6,6,8],ui8>) -> !torch.vtensor<[1,4,4,8],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<3x3x8xsi8>} : () -> !torch.vtensor<[3,3,8],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0> : tensor<8xsi8>} : () -> !torch.vtensor<[8],si8>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.1> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<80> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  // expected-error@+1 {{dequant.QLinearDepthwiseConv: its pads [0, -1, 0, 0] (4, top, left, bottom, right) and strides [1, 1] must be non-negative, the strides positive}}
  %y = "torch.operator"(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy) <{name = "onnx.QLinearDepthwiseConv"}> {torch.onnx.pads = [0 : si64, -1 : si64, 0 : si64, 0 : si64]} : (!torch.vtensor<[1,6,6,8],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, !torch.vtensor<[3,3,8],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,4,4,8],ui8>
  "func.return"(%y) : (!torch.vtensor<[1,4,4,8],ui8>) -> ()
}
