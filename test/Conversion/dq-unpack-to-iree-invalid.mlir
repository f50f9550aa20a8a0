// RUN: dequant-opt %s --dq-unpack-to-iree --verify-diagnostics

// dq-unpack-to-iree creates an op of IREE's dialect, which a context without unregistered
// dialects cannot hold: an error, not an abort.
// expected-error @+1 {{dq-unpack-to-iree creates IREE's iree_tensor_ext.bitcast: allow unregistered dialects (--allow-unregistered-dialect)}}
module {
  func.func @f(%b: tensor<8xi8>) -> tensor<4x4xi4> {
    %x = "dq.unpack"(%b) : (tensor<8xi8>) -> tensor<4x4xi4>
    return %x : tensor<4x4xi4>
  }
}
