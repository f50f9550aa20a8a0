"""dq's CPU kernels for IREE: the bodies torch-onnx-dq-matmul-iree-cpu (and, for depthwise
convolutions, torch-onnx-dq-depthwise-iree-cpu; for a convolution's rows of codes,
torch-onnx-dq-im2col-iree-cpu; for a MaxPool of them, torch-onnx-dq-maxpool-iree-cpu; for table
lookups of codes, torch-onnx-dq-lookup-iree-cpu; for a CNN's input quantized into NHWC codes,
torch-onnx-dq-quantize-iree-cpu)
hands IREE as `flow.dispatch`es (docs/iree.md, "The matmul kernel (CPU)", "The depthwise kernel",
"The im2col dispatch", "Activations as tables"). The rules every kernel here keeps,
as IREE's ukernel `common.h` states its own:

Exact and approximate.
- Exact (the model as written, up to the order of f32 sums): `f32.Kernel` (each weight
  dequantized as dq's dequantize computes it, `(u - z') * s`, and with a fractional float zero
  point `(u - z') * s - zs` as onnxruntime's kernel computes it, then f32 FMAs; at any row count),
  `digits.DigitKernel` (x's blocks as exact integers, integer sums, one rounding to f32 per
  block; docs/semantics.md#the-exact-one-row-route), `qdq.QdqKernel` (QDQ MatMuls: the model's
  own int8/uint8 activation, exact i32 sums; docs/semantics.md#the-integer-route-of-qdq-matmuls),
  `qdq_avx2.QdqAvx2Kernel` (the same sums on AVX2, weights with a zero point or uint8: products
  in i16 added by `vpmaddwd`, never saturating; bit for bit QdqKernel's results), `qdq_avxvnni.QdqAvxVnniKernel` (QdqKernel's
  sums at 8 lanes: AVX-VNNI's `vpdpbusd` on 256 bits, the AVX2 kernel's tiles and epilogue; bit
  for bit both), `qdq_avxvnni.QdqAvx2BytesKernel` (int8 weights without a zero point on AVX2:
  the AVX-VNNI kernel's body, each `vpdpbusd` as `vpmaddubsw` and `vpmaddwd`, for weights whose
  pairs cannot saturate the former once a few are split off into fix steps; bit for bit),
  `qdq_avxvnni.QdqAvx2SignKernel` (the other int8 weights without a zero point on AVX2: x as its
  magnitude by the weights xor its sign, `vpmaddubsw` pairs that cannot saturate, plus a row
  term; bit for bit; up to 192 columns one workgroup), `qdq_amx.QdqAmxKernel` (QdqKernel's direct form with AMX's `tdpbusd` for whole
  tiles of 32 rows: the same i32 sums, bit for bit its results), `digits_avx2.DigitAvx2Kernel`
  (DigitKernel's sums on AVX2, one row: `vpmaddubsw` of 4-bit weights and digits, exact in i16
  over a block),
  `depthwise.DepthwiseKernel` (QDQ depthwise convolutions: integer codes and weights summed by f32
  fused multiply-adds, exact while every partial sum stays below 2^24, which its `why_not` checks;
  the QDQ kernels' epilogue; docs/semantics.md#the-depthwise-kernel), and the tables of codes
  the QDQ and depthwise kernels' epilogues and `lookup.LookupKernel` read (an activation's values
  at each code, as onnx.reference computes the graph: docs/semantics.md#activations-as-tables),
  and `nhwc_quantize.NhwcQuantizeKernel` (a CNN's f32 image quantized into NHWC codes, the QDQ
  kernels' requantize: ONNX's QuantizeLinear code for code;
  docs/semantics.md#qdq-convolutions-as-int8-matmuls).
- No arithmetic: `im2col.Im2colKernel` (a QDQ convolution's codes copied into the rows its
  MatMul reads, zx where a tap lies in the padding), `maxpool.MaxPoolKernel` (the largest code
  of each window, compared as the codes' type).
- Approximate, opt-in only: `int8.Int8Kernel` (x quantized to int8 per row and block, as ONNX
  Runtime's MatMulNBits at accuracy_level 4; docs/semantics.md#int8-activations).
- No kernel takes a term off a sum in f32 (`p - z' * sum x`): an integer zero point comes off
  in integers, before any conversion (issue 45); a float one off each weight (issue 42).
- A requantize divides by sy, or takes sy's split reciprocal (`reciprocal.split`) only where the
  stage has checked that it gives every code the division gives
  (docs/semantics.md#the-requantizes-division).

Layout. The stage repacks constants once (`repack`); a kernel reads only its own layout:
- per workgroup (GROUPS column groups of `lanes` columns) one contiguous stream of weights, rows
  of K after one another; values stored biased to unsigned (`u = q + bias`, bias 8 for int4, 128
  for int8, 0 unsigned) so one mask and one shift unpack them;
- scales f32 and zero points `z + bias` (a byte each) `[N / W, K / block, W]`, blocks of K in
  order; a kernel's name spells every static parameter it was built for (one executable each);
- the QDQ kernels take any N: ceil(N / W) workgroups, their constants padded with zeros to whole
  workgroups, the group across N stored masked and groups past it not computed (`tail.py`);
- the depthwise kernel reads padded NHWC codes and its weights minus their zero points as f32,
  tap-major (`depthwise.py`).

CPU facts. A kernel is chosen and built from the module's tags (dq-target-features:
`dq.avx512bw`, `dq.avx512vnni`, ...), never from the host running the stage: a module compiled
for another CPU is tagged for it. Kernels needing an instruction set say so (`vpdpbusd`: AVX-512
VNNI, or on 256 bits AVX-VNNI; `vpmaddwd`: AVX2, every x86 target dq builds for; `tdpbusd`:
AMX-INT8, on Linux, which gives a process AMX's state only when asked: qdq_amx.py); their tests
name the feature and are skipped with that reason elsewhere.

Why each kernel exists (measurements: docs/iree.md, "What was measured"; not in code comments):
- `f32.Kernel` is needed because IREE's fused contraction of a dequantized int4 MatMul runs at
  a third or less of what memory allows; it is the route every other kernel falls back to.
- `int8.Int8Kernel` is needed because users opting in to MatMulNBits' int8 activations expect
  its speed: four multiply-adds per lane per `vpdpbusd`.
- `digits.DigitKernel` is needed because at one row the f32 body is bound by its conversions:
  summing exact integer digits of x with `vpdpbusd` takes about half its time, exactly.
- `qdq.QdqKernel` is needed because a QDQ MatMul's activation is already integer: its exact
  integer product skips both dequantizes and the f32 product.
- `qdq_avx2.QdqAvx2Kernel` is needed because hosts without AVX-512 VNNI (AVX2 only) would
  otherwise leave QDQ MatMuls to IREE's own lowering, at about twice the time.
- `qdq_avxvnni.QdqAvxVnniKernel` is needed because Intel's CPUs with AVX-VNNI but no AVX-512
  (Alder Lake and later client cores, Sierra Forest) would otherwise take the AVX2 kernel, two
  `vpmaddwd`s and a widening where one `vpdpbusd` does: about twice the time.
- `qdq_avxvnni.QdqAvx2BytesKernel` is needed because on AVX2 hosts the `vpmaddwd` kernel takes
  twice the multiply instructions per product of onnxruntime's (saturating) `vpmaddubsw` kernels:
  for per-tensor weights, where few pairs could saturate, the BERT-base-dims dynamic block's
  MatMuls took 0.69x the time.
- `qdq_avxvnni.QdqAvx2SignKernel` is needed because per-channel weights (quantize_static's
  default) would need too many of those fix steps and took `vpmaddwd`: the QDQ transformer
  block's MatMuls take 0.85-0.91x the time in this form.
- `qdq_amx.QdqAmxKernel` is needed because on CPUs with AMX onnxruntime's int8 GEMMs take its
  tiles: a `tdpbusd` is 16 x 16 x 64 multiply-adds, 64 `vpdpbusd`s' worth.
- `depthwise.DepthwiseKernel` is needed because IREE compiles an NCHW depthwise convolution
  without vectorizing its channels, and as sums of f32 slices between dispatches it still took
  2.5x the kernel's time: one dispatch per convolution on NHWC codes, its requantize fused.
- `digits_avx2.DigitAvx2Kernel` is needed because the f32 body's conversions bind it at one row
  on AVX2 too: the digits' integer sums take fewer instructions per weight there as well.
- `reciprocal.split` is needed because the requantize's `vdivps` bound the small-K kernels: a
  product and an FMA take its place, with the same codes.
- `lookup.LookupKernel` is needed because IREE's own lowering of a table's Gather gathers single
  bytes with a branch a lane wherever a dispatch's tiles are not whole vectors (up to 100 ns a
  byte); it runs only the lookups no kernel's epilogue took.
- `nhwc_quantize.NhwcQuantizeKernel` is needed because IREE fuses a CNN input's QuantizeLinear
  into its NHWC transpose as one strided byte store an element, with `math.roundeven` expanded:
  four times the kernel's time.
"""
