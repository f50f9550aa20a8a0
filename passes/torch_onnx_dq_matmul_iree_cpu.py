"""torch-onnx-dq-matmul-iree-cpu: an ONNX MatMul of constant 4- or 8-bit weights becomes a
dispatch of dq's matmul kernel (passes/kernels/f32.py) for IREE's llvm-cpu backend.

Input: the output of torch-onnx-to-dq, matched as torch-onnx-dq-matmul matches it (`Match`: the
weights [K, N] static, dequantized by subtracting the zero point, read only by MatMuls). When x,
the scale and the zero point are constants (the model's initializers), the scale is per tensor,
per column or blocked along K, the pass matches the MatMul (`_match`: a `Problem`, with the
integer activation of a QDQ MatMul, qdq_matmul.py), chooses the first route of
passes/kernels/routes.py that fits it on the module's `Target` (its tags) with the pass's
`Options` (`choose`; the f32 kernel last, every route's fallback; a refused route the user or
the model asked for is a remark) and rewrites it (`rewrite`; iree_dispatch.py makes IREE's ops):

    %a2 = tensor.collapse_shape %a : [b..., M, K] -> [M', K]
    %y2 = flow.dispatch @dq_matmul_...::@dq_matmul_...[%m](%a2, %w, %s[, %z], %m) -> [M', N]
    %y = tensor.expand_shape %y2 -> [b..., M, N]

with the weights, scales and zero points repacked once into the kernel's layout (`dense_resource`
constants: the int4 weights stay two per byte) and one `stream.executable` per kernel shape whose
function is the kernel body on IREE's bindings; IREE keeps the rest: the workgroups (one per
GROUPS column groups), their threads and the buffers. The ops of IREE's dialects are created in
generic form (unregistered: allow them), so the output is for `iree-compile` only, and for a CPU
target: GPU targets take torch-onnx-dq-matmul's fused contraction instead (the named pipelines in
passes/to_iree.py). A MatMul this pass does not take gets a remark saying why and is left to
torch-onnx-dq-matmul.

The weights minus a fractional float zero point, `onnx.Sub(dq(w, s), dq(ones, zs))` as
MatMulNBits' rewrite writes it (`FloatZero`), are taken too: the f32 kernel reads zs as one more
buffer after `%z` and the Sub goes (docs/iree.md#matmulnbits); a MatMul no kernel takes keeps
the Sub, for IREE's own lowering (torch-onnx-dq-matmul does not read the form).

With the option `int8-activations=true` (opt-in, approximate:
`torch-onnx-dq-matmul-iree-cpu{int8-activations=true}` in a pipeline) on a module tagged
`dq.avx512vnni`, a MatMul the int8-activation kernel takes becomes two dispatches instead, x
quantized per row and block of K, then that kernel (passes/kernels/int8.py):

    %xq, %xs, %xsum = flow.dispatch @dq_quantize_rows_...(%a2, %m)
    %y2 = flow.dispatch @dq_matmul_x8_...(%xq, %xs, %xsum, %w, %s[, %z], %m) -> [M', N]

Asked for without `dq.avx512vnni`, the pass fails with an error; a MatMul only the exact kernel
takes gets it, with a remark.

On a module tagged `dq.avx512vnni` (without int8 activations), a MatMul of 4-bit weights whose
row count is 1 or known only at run time takes the exact one-row route, two dispatches of the
same shape: x written as base-256 digits per block (`Digits`), then the kernel summing them
exactly in integers (`DigitKernel`; docs/semantics.md#the-exact-one-row-route); for a run-time
row count the kernel reads x too and takes more rows by the f32 kernel's several-rows body. A
static row count above 1 keeps the f32 kernel. On a module tagged `dq.avx2` without AVX-512, a
static row count of 1 takes the same route's AVX2 form (`DigitAvx2Kernel`, vpmaddubsw;
passes/kernels/digits_avx2.py).

On a module tagged `dq.avx512vnni`, a QDQ MatMul, whose A is an int8 or uint8 activation
dequantized per tensor (a dq op, or a DequantizeLinear left to IREE because other ops read it
too) and whose B is 8-bit weights per tensor or per column, becomes one dispatch of the exact
integer kernel reading xq itself (QdqKernel; docs/semantics.md#the-integer-route-of-qdq-matmuls);
on one tagged `dq.avx2` without VNNI, of its AVX2 form (QdqAvx2Kernel, vpmaddwd,
passes/kernels/qdq_avx2.py), or with AVX-VNNI (`dq.avxvnni`), of its 8-lane VNNI form
(QdqAvxVnniKernel, passes/kernels/qdq_avxvnni.py); the same results:

    %xq = torch_c.to_builtin_tensor %quantized : -> [M, K] i8
    %y2 = flow.dispatch @dq_matmul_qdq_...(%xq, %w, %s[, %z], %c, %m) -> [M', N]

and the activation's dequantize goes where no other op reads it. Any other QDQ MatMul keeps the
float route with a remark saying why. Where the MatMul's only reader is a QuantizeLinear per
tensor to int8 or uint8 with constant scale and zero point, or one after a constant bias Add
(y + b, or DQ(Q(y)) + DQ(bq) as quantize_static writes a bias; `requantize`), the kernel
computes those nodes too and the dispatch's result, xq of the next layer, stands for the last:

    %r = arith.constant dense<[sy, zy(, sy', zy', s'', z'')(, zh, zl(, zh', zl'))]> : tensor<2xf32> (up to 10)
    %q2 = flow.dispatch @dq_matmul_qdq_..._qu8(%xq, %w, %s[, %z], %c[, %b], %r[, %t], %m) -> [M', N] i8

with each sy's split reciprocal (zh, zl) where kernels/reciprocal.py finds it gives the division's
codes (`_rcp`: the kernel computes y / sy as fma(y, zh, y * zl)); and where a table lookup reads
those codes (`lookup`: an activation python/qdq_tables.py wrote as a Gather of 256 codes), the
kernel looks the codes up too (t: the table's [256] bytes, `_t`) and the dispatch stands for the
Gather.

On the same targets, a dynamic int8 MatMul (quantize_dynamic's DynamicQuantizeLinear +
MatMulInteger of constant 8-bit weights + Cast + Mul by sx * sw; passes/dynamic_matmul.py) becomes
one dispatch of the same kernel reading xq, sx and zx, the last two at run time (`_dynamic`;
docs/semantics.md#dynamic-int8-matmuls), and its DynamicQuantizeLinear two dispatches of dq's own
(`_pre_pass`, passes/kernels/dynamic_quantize.py: x's range by rows, then its codes by rows),
shared by the MatMuls reading x; one the kernel does not fit stays IREE's MatMulInteger, with a
remark:

    %p = flow.dispatch @dq_dynamic_range_k..._w...(%x2, %m) -> [W, 2] f32
    %xq, %sx, %zx = flow.dispatch @dq_dynamic_quantize_k..._w...(%x2, %p, %m) -> [M', K] i8, [1] f32, [1] i8
    %y2 = flow.dispatch @dq_matmul_qdq_u8_..._dyn(%xq, %sx, %zx, %w, %s[, %z], %c, %m) -> [M', N]
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from dequant.dialect.canonical import ZERO, Read
from dequant.dialect.elements import of_type

from . import Pass, dynamic_matmul
from . import torch_onnx as t
from .iree_dispatch import can_create_ops, dispatch, executable, resource, table_constant
from .kernels.dynamic_quantize import DynamicQuantize, DynamicRange
from .kernels.int8 import Int8Kernel
from .kernels.loops import row_workgroups
from .kernels.problem import Options, Problem
from .kernels.qdq import QUOTIENT_BOUND, QdqKernel, quotient_bound
from .kernels.reciprocal import reciprocals
from .kernels.routes import ROUTES, choose, for_weights
from .kernels.target import Target
from .model_constants import constant, stored
from .queries import erase_dead
from .qdq_matmul import Activation, Epilogue, activation, requantize
from .remarks import emit_remarks
from .target_features import AVX512VNNI
from .to_linalg import expand
from .torch_onnx_dq_matmul import Match, erase_unused, matches

def _per_block(reads: tuple, values: np.ndarray, k: int, n: int) -> tuple | str:
    """(block along K, values as [K / block, N]) of a scale or zero point read by `reads` over
    weights [K, N], or why the kernel cannot read it."""
    if all(r == ZERO for r in reads):  # per tensor
        return k, np.broadcast_to(values.reshape(-1)[:1], (1, n))
    if reads == (Read(1),):  # per column
        return k, values.reshape(1, n)
    if len(reads) == 2 and reads[1] == Read(1) and reads[0].dim == 0:  # blocked along K
        return reads[0].block, values
    return "its scale is not per tensor, per column or blocked along K"


class _Weights(NamedTuple):
    """A MatMul's constant weights [K, N] as its kernel's `repack` takes them: their element,
    as stored (`stored`: codes [K, N] for 8 bits), the block along K, the scale [KB, N] f32,
    the zero point [KB, N] (None: none, or all zero) and the float zero point z * s [KB, N] f32
    (None: none)."""

    element: object
    stored: np.ndarray
    block: int
    scale: np.ndarray
    zero_point: np.ndarray | None
    float_zero_point: np.ndarray | None = None


def _weights(m: Match) -> _Weights | str:
    """The weights of a MatMul, or why no kernel reads them."""
    k, n = m.kn
    v = m.definition.by_role(m.dq_op)
    e = of_type(ir.RankedTensorType(v["data"].type).element_type)
    if e.kind != "int" or e.bits not in (4, 8) or ir.RankedTensorType(m.dq_op.results[0].type).element_type != ir.F32Type.get():
        return f"its weights are {e.name} dequantized to {ir.RankedTensorType(m.dq_op.results[0].type).element_type} (the kernel reads 4- and 8-bit integers to f32)"
    q = stored(v["data"])
    if q is None:
        return "its weights are not a constant of the model"
    scale = constant(v["scale"])
    if scale is None:
        return "its scale is not a constant of the model"
    scale = _per_block(m.form.scale_map, np.asarray(scale, np.float32), k, n)  # f16/bf16 widen exactly
    if isinstance(scale, str):
        return scale
    zp = None
    if v["zero_point"] is not None and m.form.reads_zero_point:
        z = constant(v["zero_point"])
        if z is None:
            return "its zero point is not a constant of the model"
        zp = _per_block(m.form.zp_map, z.astype(np.int32), k, n)
        if isinstance(zp, str):
            return zp
        if zp[0] != scale[0]:
            return "its zero point is blocked differently from its scale"
        zp = None if not zp[1].any() else zp[1]
    zs = None
    if m.zero is not None:  # the Sub's float zero point: its dq op's scale, read as the weights' is
        zs = constant(m.zero.definition.by_role(m.zero.dq_op)["scale"])
        if zs is None:
            return "its float zero point is not a constant of the model"
        zs = _per_block(m.zero.form.scale_map, np.asarray(zs, np.float32), k, n)
        if isinstance(zs, str) or zs[0] != scale[0]:
            return "its float zero point is not blocked as its scale"
        zs = np.ascontiguousarray(zs[1])
    return _Weights(e, q, scale[0], scale[1], zp, zs)


class _QdqConstants(NamedTuple):
    """What the QDQ kernel's constants are made of besides the weights: s [1, N] = sx * sw (f32)
    and the corrections c [1, N] (docs/semantics.md#the-integer-route-of-qdq-matmuls)."""

    s: np.ndarray
    c: np.ndarray


class _Matched(NamedTuple):
    """A MatMul as the routes see it (`problem`), what its kernel's constants are made of, and
    `note`: why a QDQ MatMul's activation is read as f32 (its remark where a route is taken)."""

    problem: Problem
    weights: _Weights
    activation: Activation | None = None  # the integer activation the problem reads
    qdq: _QdqConstants | None = None
    note: str | None = None


def _match(m: Match) -> _Matched | str:
    """The Problem of a MatMul (a QDQ MatMul: its integer activation, where dq reads it), or why
    no kernel reads its weights."""
    w = _weights(m)
    if isinstance(w, str):
        return w
    rows = m.a.rows
    problem = Problem(*m.kn, w.block, w.element.bits, w.element.signed, w.zero_point is not None, rows,
                      float_zero_point=w.float_zero_point is not None)  # fmt: skip
    act = activation(m)
    if not isinstance(act, Activation):
        return _Matched(problem, w, note=act)
    if w.element.bits != 8:  # the QDQ route refuses it: its algebra below is of 8-bit codes
        return _Matched(dataclasses.replace(problem, activation="u8" if act.unsigned else "i8"), w)
    return _integer(problem, w, act)


def _integer(problem: Problem, w: _Weights, act: Activation) -> _Matched:
    """A QDQ MatMul of 8-bit weights: its Problem with the integer activation, the bound on |d|
    and the QDQ kernel's constants; or, where their scales' product leaves f32's normal range,
    the weight-only Problem with why. The integer algebra and its bound:
    docs/semantics.md#qdq-graphs-through-iree."""
    wq = (w.stored.view(np.int8) if w.element.signed else w.stored).astype(np.int64)
    centred = wq - (w.zero_point.astype(np.int64) if w.zero_point is not None else 0)  # wq - zw [K, N]
    low, high = (0, 255) if act.unsigned else (-128, 127)
    zx = act.zero_point
    largest = max(zx - low, high - zx) * int(np.abs(centred).sum(axis=0).max())  # >= |d| for every x
    with np.errstate(over="ignore", under="ignore"):
        s = act.scale * w.scale  # f32 x f32, rounded once to f32
    if not np.all(np.isfinite(s) & ((s == 0) | (np.abs(s) >= np.finfo(np.float32).tiny))):
        return _Matched(problem, w, note="the product of its activation's and weights' scales leaves f32's normal range")
    shift = zx - 128 if act.unsigned else zx  # xq - zx = v - shift, v = xq (int8) or xq - 128 (uint8)
    c = -shift * centred.sum(axis=0, keepdims=True)  # |c| <= largest < 2^31 where the route fits
    kind = "u8" if act.unsigned else "i8"
    integer = dataclasses.replace(problem, activation=kind, x_scale=float(act.scale), x_zero_point=zx, bound=largest)
    return _Matched(integer, w, act, _QdqConstants(s, c))


class _Made(NamedTuple):
    """What the MatMuls of one dequantize (and one QDQ activation) share: the kernel chosen and
    its repacked constants."""

    kernel: object
    consts: list


def _replace(m: Match, a_nd: ir.Value, call, also: list = (), flat: ir.Value | None = None) -> ir.Operation:
    """The MatMul replaced by `call(a2, rows, dyn)` -> y2 [M', N], where a2 is `a_nd` [b..., M,
    K] collapsed to [M', K] (dyn: M' or dynamic, rows: its value), or `flat` where given (a2
    already): the op now standing for the MatMul, or for also[0] (whose result y2 is) with the
    ops `also` (each the only reader of the next one's result, the last the MatMul's) and the
    MatMul."""
    k, n = m.kn
    index = ir.IndexType.get()
    with ir.InsertionPoint(m.matmul), m.matmul.location:
        a = a_nd if flat is None else flat
        lead, rows = list(m.a.shape[:-1]), m.a.rows
        dyn = ir.ShapedType.get_dynamic_size() if rows is None else rows
        if len(lead) > 1 and flat is None:
            element = ir.RankedTensorType(a.type).element_type
            a = tensor.collapse_shape(ir.RankedTensorType.get([dyn, k], element), a, [list(range(len(lead))), [len(lead)]])
        rows_v = arith.constant(index, rows) if rows is not None else tensor.dim(a, arith.constant(index, 0))
        y = call(a, rows_v, dyn)
        if len(lead) > 1:
            sizes = [tensor.dim(a_nd, arith.constant(index, i)) if d is None else d for i, d in enumerate(lead)]
            y = expand(y, sizes + [n], [list(range(len(lead))), [len(lead)]])
        replaced = [*also, m.matmul]
        stands = t.tensor_of(replaced[0].results[0].type)  # a residual Add's QuantizeLinear: [..., N] of y's M' rows
        if len(lead) == 1 and not isinstance(stands, str) and len(stands.shape) > 2:
            y = expand(y, list(stands.shape), [list(range(len(stands.shape) - 1)), [len(stands.shape) - 1]])
        out = t.from_builtin(y, replaced[0].results[0].type)
    for op in replaced:
        op.results[0].replace_all_uses_with(out)
        op.erase()
    return out.owner


def _constants(kernel, matched: _Matched) -> _Made:
    """The kernel for the weights (`for_weights`) and its repacked constants as
    `dense_resource`s, at the insertion point."""
    w = matched.weights
    f32, i8, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    if isinstance(kernel, QdqKernel):
        kernel = for_weights(kernel, w.stored)
        packed = kernel.repack(w.stored, matched.qdq.s, w.zero_point, matched.qdq.c)
    else:
        floats = [] if w.float_zero_point is None else [w.float_zero_point]  # only the f32 kernel takes one
        packed = kernel.repack(w.stored, np.ascontiguousarray(w.scale), w.zero_point, *floats)
    out = [resource(packed.w, i8, "dq_kernel_w"), resource(packed.s, f32, "dq_kernel_s")]
    out += [resource(packed.z, i8, "dq_kernel_z")] if packed.z is not None else []
    out += [resource(packed.zf, f32, "dq_kernel_zf")] if packed.zf is not None else []
    return _Made(kernel, out + ([resource(packed.c, i32, "dq_kernel_c")] if packed.c is not None else []))


@dataclasses.dataclass
class _State:
    """What the pass keeps across MatMuls: each (dequantize, activation)'s match and the route
    chosen for it, and each kernel's constants (`_Made`: one set per dequantize, for the QDQ
    kernel per activation too)."""

    chosen: dict = dataclasses.field(default_factory=dict)
    made: dict = dataclasses.field(default_factory=dict)


def rewrite(m: Match, module, state: _State, target: Target, options: Options, remarks: list):
    """Rewrite one MatMul into a kernel dispatch (match -> choose -> rewrite): why not (a str;
    nothing changed), or the op now standing for the MatMul (at its location) or for the
    QuantizeLinear the QDQ kernel's epilogue computes. A refused route the user or the model
    asked for is a remark (in `remarks`)."""
    a = m.activation[0] if m.activation is not None else m.matmul.operands[0].owner
    key = (m.dq_op.operation, a.operation if isinstance(a, (ir.Operation, ir.OpView)) else None)
    if key not in state.chosen:
        matched = _match(m)
        state.chosen[key] = (matched, None if isinstance(matched, str) else choose(matched.problem, target, options))
    matched, choice = state.chosen[key]
    if isinstance(matched, str):
        return matched
    if choice.kernel is None:
        return choice.why_not
    qdq = isinstance(choice.kernel, QdqKernel)
    made = key if qdq else m.dq_op.operation  # the float routes' constants: one set per dequantize
    if made not in state.made:
        with ir.InsertionPoint(m.dq_op), m.matmul.location:  # dominates every MatMul reading the weights
            state.made[made] = _constants(choice.kernel, matched)
    kernel, consts = state.made[made]
    notes = ([f"QDQ MatMul given dq's float route, not its integer kernel: {matched.note}"] if matched.note else []) + choice.remarks()
    if qdq:
        done = _rewrite_qdq(m, module, kernel, consts, matched, remarks)
    else:
        done = _rewrite_float(m, module, kernel, consts)
    remarks += [(done, text) for text in notes]
    return done


def _rewrite_float(m: Match, module, kernel, consts: list) -> ir.Operation:
    """The MatMul as a dispatch of `kernel` (after the Quantize dispatch of x its kernel reads)."""
    n, f32 = m.kn[1], ir.F32Type.get()
    name = executable(kernel, module)

    def call(a, rows_v, dyn):
        if isinstance(kernel, Int8Kernel):  # x quantized once per call, by a dispatch of its own
            quantize = kernel.quantize()
            types = quantize.types()
            shapes = [ir.RankedTensorType.get([dyn, *types[r].shape[1:]], types[r].element_type) for r in quantize.results]
            inputs = dispatch(executable(quantize, module), [a], rows_v, shapes)
            inputs = ([a] if "x" in kernel.types() else []) + inputs  # DigitKernel of any row count
        else:
            inputs = [a]
        return dispatch(name, inputs + consts, rows_v, [ir.RankedTensorType.get([dyn, n], f32)])[0]

    with m.matmul.location, ir.InsertionPoint(m.matmul):
        a_nd = t.to_builtin(m.matmul.operands[0], m.a)
    return _replace(m, a_nd, call)


def _rewrite_qdq(m: Match, module, kernel: QdqKernel, consts: list, matched: _Matched, remarks: list) -> ir.Operation:
    """The QDQ MatMul as a dispatch of the exact integer kernel reading xq, and the
    QuantizeLinear reading its result as the kernel's epilogue where it can (else a remark)."""
    act = matched.activation
    f32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(8)
    epilogue = requantize(m)
    if isinstance(epilogue, str):
        remarks.append((next(iter(m.matmul.results[0].uses)).owner, f"QuantizeLinear not fused into dq's QDQ kernel: {epilogue}"))
    if not isinstance(epilogue, Epilogue):
        epilogue = None
    else:  # the same kernel, its epilogue the QuantizeLinear reading y (after a bias)
        res = epilogue.residual
        kernel = dataclasses.replace(kernel, requantize=epilogue.out, mid=epilogue.mid, bias_add=epilogue.bias is not None, table=epilogue.table is not None,
                                     residual=(res.first, res.kind) if res is not None else None)  # fmt: skip
        pairs = reciprocals(epilogue.r, kernel.divisors)
        if pairs is not None:  # y / sy by a product and an FMA, the same codes (kernels/reciprocal.py)
            kernel = dataclasses.replace(kernel, reciprocal=True)
            epilogue = epilogue._replace(r=np.concatenate([epilogue.r, pairs]))
        if kernel.CAPS and quotient_bound(matched.problem.bound, matched.qdq.s, epilogue.r, epilogue.bias, kernel.mid, kernel.residual) < QUOTIENT_BOUND:
            kernel = dataclasses.replace(kernel, bounded=True)  # no cap before the conversion
    name = executable(kernel, module)
    also, out = [], f32
    inputs = []
    with m.matmul.location, ir.InsertionPoint(m.matmul):
        xq = act.codes()
        if epilogue is not None and epilogue.residual is not None:  # the other codes [M', N], as y
            theirs = epilogue.residual.codes
            codes = ir.Operation.create(t.TO_BUILTIN, results=[t.tensor_of(theirs.type).builtin()], operands=[theirs]).result
            shape = ir.RankedTensorType(codes.type).shape
            rows = int(np.prod(shape[:-1]))
            flat = tensor.collapse_shape(ir.RankedTensorType.get([rows, m.kn[1]], i8), codes, [list(range(len(shape) - 1)), [len(shape) - 1]]) if len(shape) != 2 else codes
            inputs = [flat]
        if epilogue is not None:  # this MatMul's own bias, scales and zero points
            also, out, r = epilogue.ops, i8, epilogue.r
            if epilogue.bias is not None:
                consts = consts + [resource(kernel.per_column(epilogue.bias), f32, "dq_kernel_b")]
            consts = consts + [arith.constant(ir.RankedTensorType.get([r.size], f32), ir.DenseElementsAttr.get(r))]
            if epilogue.table is not None:
                consts.append(table_constant(epilogue.table))
    done = _replace(m, xq, lambda a, rows_v, dyn: dispatch(name, [a, *(_rows(v, dyn) for v in inputs)] + consts, rows_v, [ir.RankedTensorType.get([dyn, m.kn[1]], out)])[0], also)
    for dq in (epilogue.bias_op, epilogue.residual.dq if epilogue.residual else None) if epilogue is not None else ():
        if dq is not None and not list(dq.results[0].uses):
            dq.erase()
    return done


def _rows(value: ir.Value, dyn) -> ir.Value:
    """A tensor [M', N] typed with the dispatch's row dim `dyn` (dynamic, or M' itself)."""
    have = ir.RankedTensorType(value.type)
    want = ir.RankedTensorType.get([dyn, have.shape[1]], have.element_type)
    return value if want == have else tensor.cast(want, value)


_QDQ_ROUTE = tuple(r for r in ROUTES if r.name == "qdq")


def _dynamic(d: dynamic_matmul.Dynamic, module, state: _State, target: Target, options: Options) -> ir.Operation | str:
    """A dynamic int8 MatMul (DynamicQuantizeLinear's xq, sx and zx; MatMulInteger, Cast and the
    Mul by sx * sw) as a dispatch of the QDQ kernel reading sx and zx at run time (its `dynamic`
    form), or why not (only the QDQ route computes this y: no other route is tried)."""
    k, n = d.kn
    wq = (d.codes.view(np.int8) if d.signed else d.codes).astype(np.int64)
    centred = wq - (d.zw.astype(np.int64) if d.zw is not None else 0)  # wq - zw [K, N]
    rows = d.a.rows
    kind = "i8" if d.a.element.signed else "u8"
    # |xq - zx| <= 255 for every zx of xq's type: the bound holds whatever zx the run makes
    problem = Problem(k, n, k, 8, d.signed, d.zw is not None, rows, kind, bound=255 * int(np.abs(centred).sum(axis=0).max()))
    choice = choose(problem, target, options, _QDQ_ROUTE)
    if choice.kernel is None:
        return choice.why_not
    f32, i8, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    # the constants' own ops (weights, zw, sw; and sx, zx's DynamicQuantizeLinear): one set each
    key = ("dynamic", *(getattr(v.owner, "operation", v.owner) for v in [*d.matmul.operands[1:], *d.scale.operands]))
    if key not in state.made:  # s = sw, c = sum_k (wq - zw): the body applies sx and zx
        kernel = for_weights(choice.kernel, d.codes)
        with ir.InsertionPoint(d.matmul), d.matmul.location:
            packed = kernel.repack(d.codes, d.sw, d.zw, centred.sum(axis=0, keepdims=True))
            consts = [resource(packed.w, i8, "dq_kernel_w"), resource(packed.s, f32, "dq_kernel_s")]
            consts += [resource(packed.z, i8, "dq_kernel_z")] if packed.z is not None else []
            state.made[key] = _Made(kernel, consts + [resource(packed.c, i32, "dq_kernel_c")])
    kernel, consts = state.made[key]
    name = executable(kernel, module)
    x_nd, xq, *x_terms = _pre_pass(d, module, state)
    operands = list(d.matmul.operands[1:]) + list(d.scale.operands)
    scale = d.scale
    done = _replace(d, x_nd, lambda a, rows_v, dyn: dispatch(name, [a, *x_terms] + consts, rows_v, [ir.RankedTensorType.get([dyn, n], f32)])[0],
                    [d.mul, d.cast], flat=xq)  # fmt: skip
    if not list(scale.results[0].uses):
        scale.erase()
    erase_dead(operands, lambda o: t.onnx_name(o) == "onnx.Constant")
    return done


def _pre_pass(d: dynamic_matmul.Dynamic, module, state: _State) -> tuple:
    """(x [b..., M, K] f32, xq [M', K] i8, sx [1] f32, zx [1] i8) of the DynamicQuantizeLinear
    reading x, as a dispatch of DynamicRange and one of DynamicQuantize at its place (made once per
    node; the node goes when nothing else reads it). IREE would fuse its min/max into the dispatch
    making x, which for a decoder's RMSNorm keeps the rows on the stack past llvm-cpu's limit
    (docs/iree.md)."""
    key = ("dynamic-quantize", d.quantize.operation)
    if key not in state.made:
        q = d.quantize
        x, k = q.operands[0], d.kn[0]
        xt = t.tensor_of(x.type)
        index = ir.IndexType.get()
        with q.location, ir.InsertionPoint(q):
            x_nd = t.to_builtin(x, xt)
            lead, rows = list(xt.shape[:-1]), xt.rows
            dyn = ir.ShapedType.get_dynamic_size() if rows is None else rows
            x2 = x_nd
            if len(lead) > 1:
                x2 = tensor.collapse_shape(ir.RankedTensorType.get([dyn, k], ir.F32Type.get()), x_nd, [list(range(len(lead))), [len(lead)]])
            rows_v = arith.constant(index, rows) if rows is not None else tensor.dim(x2, arith.constant(index, 0))
            count = row_workgroups(rows)
            span, pre = DynamicRange(k, count), DynamicQuantize(k, count)

            def shapes(kernel) -> list:
                types = kernel.types()
                return [ir.RankedTensorType.get([dyn if types[r].is_dynamic_dim(0) else types[r].shape[0], *types[r].shape[1:]], types[r].element_type)
                        for r in kernel.results]  # fmt: skip

            partial = dispatch(executable(span, module), [x2], rows_v, shapes(span))
            state.made[key] = _Made(pre, [x_nd, *dispatch(executable(pre, module), [x2, *partial], rows_v, shapes(pre))])
    return tuple(state.made[key].consts)


def run(root, int8_activations: bool = False) -> bool:
    remarks = []
    found = matches(root, remarks, float_zero_points=True)
    if found is None:
        return False
    dynamic = []
    for mmi in t.nodes(root, "onnx.MatMulInteger"):
        got = dynamic_matmul.match(mmi)
        if isinstance(got, str):
            remarks.append((mmi, f"MatMulInteger left to IREE: {got}"))
        elif got is not None:
            dynamic.append(got)
    if (found or dynamic) and not can_create_ops(root, "torch-onnx-dq-matmul-iree-cpu"):
        return False
    target, options = Target.of(root), Options(int8_activations)
    if options.int8_activations and not target.avx512vnni:
        root.location.emit_error("int8 activations (int8-activations=true) need AVX-512 VNNI, which the target lacks "
                                 f"(dq-target-features tags the module {AVX512VNNI} where the host has it)")  # fmt: skip
        return False
    state, done, activations, subs = _State(), set(), set(), {}
    for m in found:
        got = rewrite(m, root, state, target, options, remarks)
        if isinstance(got, str):
            instead = "IREE's own lowering" if m.zero is not None else "fused contraction"
            remarks.append((m.matmul, f"MatMul not given dq's CPU kernel ({instead} instead): {got}"))
            continue
        done.add(m.dq_op)
        if m.activation is not None:
            activations.add(m.activation[0])
        if m.zero is not None:
            subs[m.zero.sub.operation] = m.zero.dq_op
    for sub, zero in subs.items():  # a float zero point's Sub no MatMul reads any more
        if not list(sub.results[0].uses):
            sub.erase()
            done.add(zero)
    erase_unused(done | activations)  # an activation's dequantize no MatMul reads any more (QDQ kernel)
    for d in dynamic:
        got = _dynamic(d, root, state, target, options)
        if isinstance(got, str):
            remarks.append((d.matmul, f"MatMulInteger left to IREE: {got}"))
    for q in {d.quantize.operation: d.quantize for d in dynamic}.values():  # DynamicQuantizeLinear now a dq dispatch
        if all(not list(r.uses) for r in q.results):
            q.erase()
    emit_remarks(root, remarks)
    return True


PASS = Pass("torch-onnx-dq-matmul-iree-cpu", "Rewrite ONNX MatMuls of constant 4/8-bit weights into dispatches of dq's matmul kernel for IREE's llvm-cpu backend",
            run, options={"int8-activations": False})  # fmt: skip
