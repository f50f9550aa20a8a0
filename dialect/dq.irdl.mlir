// The `dq` dialect: operands, results and required attributes of each op, in IRDL.
//
// IRDL checks structure; element types, optional attributes with their spec defaults, and
// every shape and value rule are op semantics in Python beside this file (onnx.py, ...),
// because a dynamic dialect cannot constrain a builtin tensor's element type.
// Each operand has its own constraint value: IRDL unifies operands sharing one.
irdl.dialect @dq {
  // ONNX DequantizeLinear, opsets 10-24. Attributes (optional, spec defaults):
  //   axis: i64 = 1, block_size: i64 = 0, output_dtype: type = type of x_scale.
  irdl.operation @onnx_dequantize_linear {
    %x = irdl.base "!builtin.tensor"
    %x_scale = irdl.base "!builtin.tensor"
    %x_zero_point = irdl.base "!builtin.tensor"
    %y = irdl.base "!builtin.tensor"
    irdl.operands(x: %x, x_scale: %x_scale, x_zero_point: optional %x_zero_point)
    irdl.results(y: %y)
  }

  // oneDNN Graph DynamicDequantize-1. Attributes (optional, spec defaults):
  //   qtype: string = "per_tensor", axis: i64 = 1.
  irdl.operation @onednn_dynamic_dequantize {
    %input = irdl.base "!builtin.tensor"
    %scales = irdl.base "!builtin.tensor"
    %zps = irdl.base "!builtin.tensor"
    %output = irdl.base "!builtin.tensor"
    irdl.operands(input: %input, scales: %scales, zps: optional %zps)
    irdl.results(output: %output)
  }

  // nGraph Dequantize. Attributes: type: type (required), axes: array<i64> = [].
  irdl.operation @ngraph_dequantize {
    %input = irdl.base "!builtin.tensor"
    %scale = irdl.base "!builtin.tensor"
    %zero_point = irdl.base "!builtin.tensor"
    %output = irdl.base "!builtin.tensor"
    %type = irdl.base "#builtin.type"
    irdl.operands(input: %input, scale: %scale, zero_point: %zero_point)
    irdl.results(output: %output)
    irdl.attributes {"type" = %type}
  }

  // OpenPPL (ppl.pmx) DequantizeLinear. Attributes: quant_data_type: string (required),
  //   quant_method: string = "", quant_axis: i64 = 1, group_size: i64 = 128,
  //   has_zeropoint: bool = false, float_zeropoint: bool = false.
  // IRDL names are lower case: x, scale, zero_point, y stand for X, Scale, ZeroPoint, Y.
  irdl.operation @pmx_dequantize_linear {
    %x = irdl.base "!builtin.tensor"
    %scale = irdl.base "!builtin.tensor"
    %zero_point = irdl.base "!builtin.tensor"
    %y = irdl.base "!builtin.tensor"
    %quant_data_type = irdl.base "#builtin.string"
    irdl.operands(x: %x, scale: %scale, zero_point: optional %zero_point)
    irdl.results(y: %y)
    irdl.attributes {"quant_data_type" = %quant_data_type}
  }

  // The canonical form all spec ops normalise to (canonical.py).
  irdl.operation @dequantize {
    %x = irdl.base "!builtin.tensor"
    %scale = irdl.base "!builtin.tensor"
    %zero_point = irdl.base "!builtin.tensor"
    %y = irdl.base "!builtin.tensor"
    %scale_map = irdl.base "#builtin.affine_map"
    %zero_point_map = irdl.base "#builtin.affine_map"
    irdl.operands(x: %x, scale: %scale, zero_point: optional %zero_point)
    irdl.results(y: %y)
    irdl.attributes {"scale_map" = %scale_map, "zero_point_map" = %zero_point_map}
  }
}
