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
