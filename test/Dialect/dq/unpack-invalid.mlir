// RUN: dequant-opt %s --split-input-file --verify-diagnostics --dq-to-linalg

// dq.unpack: a 1-D i8 byte tensor, one index per dynamic result dim, a sub-byte result, and, when
// all is static, ceil(elements * bits / 8) bytes (docs/semantics.md#packed-sub-byte-data).

func.func @byte_count(%b: tensor<7xi8>) -> tensor<3x5xi4> {
  // expected-error @+1 {{'dq.unpack' op bytes must hold ceil(15 * 4 / 8) = 8 bytes, got 7}}
  %x = "dq.unpack"(%b) : (tensor<7xi8>) -> tensor<3x5xi4>
  return %x : tensor<3x5xi4>
}

// -----

func.func @two_bit_count(%b: tensor<3xi8>) -> tensor<13xui2> {
  // expected-error @+1 {{'dq.unpack' op bytes must hold ceil(13 * 2 / 8) = 4 bytes, got 3}}
  %x = "dq.unpack"(%b) : (tensor<3xi8>) -> tensor<13xui2>
  return %x : tensor<13xui2>
}

// -----

func.func @not_bytes(%b: tensor<8xui8>) -> tensor<16xi4> {
  // expected-error @+1 {{'dq.unpack' op bytes must be a 1-D tensor of i8, got tensor<8xui8>}}
  %x = "dq.unpack"(%b) : (tensor<8xui8>) -> tensor<16xi4>
  return %x : tensor<16xi4>
}

// -----

func.func @not_sub_byte(%b: tensor<8xi8>) -> tensor<8xi8> {
  // expected-error @+1 {{'dq.unpack' op the result's element type must be a sub-byte type (i4, ui4, f4E2M1FN, i2, ui2), got i8}}
  %x = "dq.unpack"(%b) : (tensor<8xi8>) -> tensor<8xi8>
  return %x : tensor<8xi8>
}

// -----

func.func @dims(%b: tensor<?xi8>, %n: index) -> tensor<?x?xi4> {
  // expected-error @+1 {{'dq.unpack' op takes one index operand per dynamic dim of the result (2), got 1}}
  %x = "dq.unpack"(%b, %n) : (tensor<?xi8>, index) -> tensor<?x?xi4>
  return %x : tensor<?x?xi4>
}

// -----

// Only dq ops read packed data: any other reader is an error of dq-to-linalg.
func.func @other_reader(%b: tensor<8xi8>) -> tensor<16xi4> {
  // expected-error @+1 {{'dq.unpack' op result is read by 'func.return': only dq ops read packed data}}
  %x = "dq.unpack"(%b) : (tensor<8xi8>) -> tensor<16xi4>
  return %x : tensor<16xi4>
}
