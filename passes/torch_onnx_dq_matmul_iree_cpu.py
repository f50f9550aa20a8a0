"""torch-onnx-dq-matmul-iree-cpu: an ONNX MatMul of constant 4- or 8-bit weights becomes a
dispatch of dq's matmul kernel (passes/kernels/f32.py) for IREE's llvm-cpu backend.

Input: the output of torch-onnx-to-dq, matched as torch-onnx-dq-matmul matches it (`Match`: the
weights [K, N] static, dequantized by subtracting the zero point, read only by MatMuls). When x,
the scale and the zero point are constants (the model's initializers), the scale is per tensor,
per column or blocked along K, the pass states the MatMul as a `Problem` and takes the first
route of passes/kernels/routes.py that fits it on the module's `Target` (its tags) with the
pass's `Options` (`choose`; the f32 kernel last, every route's fallback), and the MatMul becomes

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

On a module tagged `dq.int8_activations` (dq-int8-activations: opt-in, approximate) and
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

A QDQ MatMul, whose A is an int8 or uint8 activation dequantized per tensor (a dq op, or a
DequantizeLinear left to IREE because other ops read it too) and whose B is 8-bit weights per
tensor or per column, becomes one dispatch of the exact integer kernel reading xq itself
(docs/semantics.md#the-integer-route-of-qdq-matmuls): QdqKernel (vpdpbusd) on a module tagged
`dq.avx512vnni`, else QdqAvx2Kernel on one tagged `dq.avx2` or `dq.avx512bw` (vpmaddwd,
passes/kernels/qdq_avx2.py; the same results):

    %xq = torch_c.to_builtin_tensor %quantized : -> [M, K] i8
    %y2 = flow.dispatch @dq_matmul_qdq_...(%xq, %w, %s[, %z], %c, %m) -> [M', N]

and the activation's dequantize goes where no other op reads it. Any other QDQ MatMul keeps the
float route with a remark saying why. Where the MatMul's only reader is a QuantizeLinear per
tensor to int8 or uint8 with constant scale and zero point, or one after a constant bias Add
(y + b, or DQ(Q(y)) + DQ(bq) as quantize_static writes a bias; `_requantize`), the kernel
computes those nodes too and the dispatch's result, xq of the next layer, stands for the last:

    %r = arith.constant dense<[sy, zy(, sy', zy', s'', z'')]> : tensor<2xf32> (or 6)
    %q2 = flow.dispatch @dq_matmul_qdq_..._qu8(%xq, %w, %s[, %z], %c[, %b], %r, %m) -> [M', N] i8
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
from mlir import ir
from mlir.dialects import arith, builtin, func, tensor

from dequant.dialect import constants, unpack
from dequant.dialect.canonical import ZERO, Read
from dequant.dialect.elements import of_type

from . import Pass
from . import torch_onnx as t
from .int8_activations import INT8_ACTIVATIONS
from .kernels.int8 import Int8Kernel
from .kernels.problem import Options, Problem
from .kernels.qdq import QdqKernel
from .kernels.qdq_avx2 import QdqAvx2Kernel
from .kernels.routes import Choice, choose
from .kernels.target import Target
from .queries import made_by
from .remarks import emit_remarks
from .target_features import AVX512VNNI
from .to_linalg import expand
from .torch_onnx_dq_matmul import Match, erase_unused, matches
from .torch_onnx_to_dq import read_attrs

BINDING = "!stream.binding"


def _stored(value: ir.Value) -> np.ndarray | None:
    """A constant 4- or 8-bit integer tensor as the model stores it, read in place, as
    `Kernel.repack` takes it (uint8: a code per element for 8 bits, the packed bytes in ONNX
    order for 4), or None."""
    rt = ir.RankedTensorType(value.type)
    e = of_type(rt.element_type)
    if (owner := made_by(value, unpack.NAME)) is None:
        values = _constant(value)
        return None if values is None or e.bits != 8 else values.view(np.uint8)
    source = made_by(owner.operands[0], "arith.constant")
    data = constants.resource_view(source.attributes["value"]) if source is not None else None
    if data is None or e.bits != 4 or len(data) != unpack.packed_bytes(tuple(rt.shape), e.bits):
        return None
    return data


def _constant(value: ir.Value) -> np.ndarray | None:
    """The values of a builtin tensor the stage made from a model's constant, or None."""
    rt = ir.RankedTensorType(value.type)
    e = of_type(rt.element_type)
    if e is None or not rt.has_static_shape:
        return None
    shape = tuple(rt.shape)
    if (owner := made_by(value, unpack.NAME)) is not None:
        source = made_by(owner.operands[0], "arith.constant")
        data = constants.resource_view(source.attributes["value"]) if source is not None else None
        if data is None or len(data) != unpack.packed_bytes(shape, e.bits):
            return None
        return unpack.unpack_values(data, e, shape)
    if (owner := made_by(value, "tensor.bitcast")) is not None:
        inner = _constant(owner.operands[0])
        return None if inner is None else inner.view(e.dtype)
    if (owner := made_by(value, t.TO_BUILTIN)) is not None:
        attr = t.constant_value(owner.operands[0])
    elif (owner := made_by(value, "arith.constant")) is not None:
        attr = owner.attributes["value"]
    else:
        return None
    return _values(attr, e, shape)


def _torch_constant(value: ir.Value) -> np.ndarray | None:
    """The values of a torch tensor a model's constant (`onnx.Constant`) defines, or None."""
    tt = t.tensor_of(value.type)
    if isinstance(tt, str) or None in tt.shape or tt.element.sub_byte:
        return None
    return _values(t.constant_value(value), tt.element, tuple(tt.shape))


def _values(attr, e, shape: tuple) -> np.ndarray | None:
    """The values of a constant's attribute (elements or a resource blob) of element e, or None."""
    if attr is None:
        return None
    values = constants.elements_value(attr)
    if values is None and not e.sub_byte:
        data = constants.resource_view(attr)
        if data is not None and len(data) == int(np.prod(shape)) * e.carrier.itemsize:
            values = np.frombuffer(data, e.carrier).view(e.dtype).reshape(shape)
    return values if values is not None and values.shape == shape else None


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


def _weights(m: Match) -> tuple | str:
    """(the weights' element, the weights as stored (`_stored`: codes [K, N] for 8 bits), (block,
    scale [KB, N] f32), zero point [KB, N] or None), or why no kernel reads them."""
    k, n = m.kn
    v = m.definition.by_role(m.dq_op)
    e = of_type(ir.RankedTensorType(v["data"].type).element_type)
    if e.kind != "int" or e.bits not in (4, 8) or ir.RankedTensorType(m.dq_op.results[0].type).element_type != ir.F32Type.get():
        return f"its weights are {e.name} dequantized to {ir.RankedTensorType(m.dq_op.results[0].type).element_type} (the kernel reads 4- and 8-bit integers to f32)"
    q = _stored(v["data"])
    if q is None:
        return "its weights are not a constant of the model"
    scale = _constant(v["scale"])
    if scale is None:
        return "its scale is not a constant of the model"
    scale = _per_block(m.form.scale_map, np.asarray(scale, np.float32), k, n)  # f16/bf16 widen exactly
    if isinstance(scale, str):
        return scale
    zp = None
    if v["zero_point"] is not None and m.form.reads_zero_point:
        z = _constant(v["zero_point"])
        if z is None:
            return "its zero point is not a constant of the model"
        zp = _per_block(m.form.zp_map, z.astype(np.int32), k, n)
        if isinstance(zp, str):
            return zp
        if zp[0] != scale[0]:
            return "its zero point is blocked differently from its scale"
        zp = None if not zp[1].any() else zp[1]
    return e, q, scale, zp


def _problem(m: Match) -> tuple | str:
    """(the Problem, the weights as stored (`_stored`), scale [KB, N] f32, zero point [KB, N] or
    None) of a weight-only MatMul, or why no kernel reads its weights."""
    got = _weights(m)
    if isinstance(got, str):
        return got
    e, q, (block, scale), zp = got
    lead = m.a.shape[:-1]
    rows = None if None in lead else int(np.prod(lead))
    return Problem(*m.kn, block, e.bits, e.signed, zp is not None, rows), q, np.ascontiguousarray(scale), zp


class _Made(NamedTuple):
    """What one dequantize's MatMuls share: the route chosen and the repacked constants."""

    choice: Choice
    consts: list


def _op(name: str, results=(), operands=(), attributes=None, regions: int = 0):
    return ir.Operation.create(name, results=list(results), operands=list(operands), attributes=attributes or {}, regions=regions)


def _executable(kernel, module) -> str:
    """The `stream.executable` of `kernel` (a Kernel, Int8Kernel or Quantize) at the top of
    `module` (made once); its name, which is also its export's and function's."""
    name = kernel.name()
    for op in module.regions[0].blocks[0].operations:
        if op.name == "stream.executable" and ir.StringAttr(op.attributes["sym_name"]).value_bytes == name.encode():
            return name
    index = ir.IndexType.get()
    binding = ir.OpaqueType.get("stream", "binding")
    types = kernel.types()
    roles = list(types)  # the dispatch's tensor operands, then its results (kernel.results)
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        exe = _op("stream.executable", attributes={"sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("private")}, regions=1)
    with ir.InsertionPoint(exe.regions[0].blocks.append()):
        export = _op("stream.executable.export", regions=1, attributes={
            "function_ref": ir.FlatSymbolRefAttr.get(name), "sym_name": ir.StringAttr.get(name), "sym_visibility": ir.StringAttr.get("public")})  # fmt: skip
        with ir.InsertionPoint(export.regions[0].blocks.append(index)):
            one = arith.constant(index, 1)
            _op("stream.return", operands=[arith.constant(index, kernel.workgroups), one, one])
        inner = builtin.ModuleOp()
        with ir.InsertionPoint(inner.body):
            f = func.FuncOp(name, ir.FunctionType.get([binding] * len(roles) + [index], []))
            with ir.InsertionPoint(f.add_entry_block()):
                *bindings, m = f.arguments
                zero = arith.constant(index, 0)
                views = {}
                for role, b in zip(roles, bindings):
                    dims = [m] if types[role].is_dynamic_dim(0) else []
                    views[role] = _op("stream.binding.subspan", [types[role]], [b, zero] + dims).result
                group = _op("stream.dispatch.workgroup.id", [index], attributes={"dimension": ir.IntegerAttr.get(index, 0)}).result
                kernel.emit_views(views, m, group)
                func.ReturnOp([])
        _op("stream.executable.end")
    return name


def _dispatch(name: str, args: list, rows_v, results: list) -> list:
    """A flow.dispatch of `name`'s export over `args` (tensors) and the row count `rows_v`, its
    workload: the `results` types' values. Every dynamic dim is the row count."""
    dynamic = [rows_v for v in args if not ir.RankedTensorType(v.type).has_static_shape]
    out_dims = [rows_v for t in results if not ir.RankedTensorType(t).has_static_shape]
    index = ir.IndexType.get()
    operands = args + [rows_v]
    op = _op("flow.dispatch", results, [rows_v] + operands + dynamic + out_dims, attributes={
        "entry_points": ir.ArrayAttr.get([ir.SymbolRefAttr.get([name, name])]),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(operands), len(dynamic), len(out_dims)]),
        "tied_operands": ir.ArrayAttr.get([ir.IntegerAttr.get(index, -1)] * len(results))})  # fmt: skip
    return list(op.results)


def _resource(array: np.ndarray, element: ir.Type, name: str) -> ir.Value:
    attr = ir.DenseResourceElementsAttr.get_from_buffer(array, name, ir.RankedTensorType.get(list(array.shape), element))
    return arith.constant(attr.type, attr)


def _replace(m: Match, a_nd: ir.Value, call, also: list = ()) -> ir.Operation:
    """The MatMul replaced by `call(a2, rows, dyn)` -> y2 [M', N], where a2 is `a_nd` [b..., M,
    K] collapsed to [M', K] (dyn: M' or dynamic, rows: its value): the op now standing for the
    MatMul, or for also[0] (whose result y2 is) with the ops `also` (each the only reader of the
    next one's result, the last the MatMul's) and the MatMul."""
    k, n = m.kn
    index = ir.IndexType.get()
    with ir.InsertionPoint(m.matmul), m.matmul.location:
        a = a_nd
        lead = list(m.a.shape[:-1])
        rows = None if None in lead else int(np.prod(lead))
        dyn = ir.ShapedType.get_dynamic_size() if rows is None else rows
        if len(lead) > 1:
            element = ir.RankedTensorType(a.type).element_type
            a = tensor.collapse_shape(ir.RankedTensorType.get([dyn, k], element), a, [list(range(len(lead))), [len(lead)]])
        rows_v = arith.constant(index, rows) if rows is not None else tensor.dim(a, arith.constant(index, 0))
        y = call(a, rows_v, dyn)
        if len(lead) > 1:
            sizes = [tensor.dim(a_nd, arith.constant(index, i)) if d is None else d for i, d in enumerate(lead)]
            y = expand(y, sizes + [n], [list(range(len(lead))), [len(lead)]])
        replaced = [*also, m.matmul]
        out = t.from_builtin(y, replaced[0].results[0].type)
    for op in replaced:
        op.results[0].replace_all_uses_with(out)
        op.erase()
    return out.owner


def rewrite(m: Match, module, made: dict, target: Target, options: Options):
    """Rewrite one MatMul into a kernel dispatch: why not (a str; nothing changed), or the op
    now standing for the MatMul (at its location)."""
    key = m.dq_op.operation
    if key not in made:
        got = _problem(m)
        if isinstance(got, str):
            return got
        problem, stored, scale, zp = got
        choice = choose(problem, target, options)
        if choice.kernel is None:
            return choice.why_not
        w, s, z = choice.kernel.repack(stored, scale, zp)
        f32, i8 = ir.F32Type.get(), ir.IntegerType.get_signless(8)
        with ir.InsertionPoint(m.dq_op), m.matmul.location:  # dominates every MatMul reading the weights
            made[key] = _Made(choice, [_resource(w, i8, "dq_kernel_w"), _resource(s, f32, "dq_kernel_s")]
                              + ([_resource(z, i8, "dq_kernel_z")] if z is not None else []))  # fmt: skip
    kernel, consts = made[key].choice.kernel, made[key].consts
    n, f32 = m.kn[1], ir.F32Type.get()
    name = _executable(kernel, module)

    def call(a, rows_v, dyn):
        if isinstance(kernel, Int8Kernel):  # x quantized once per call, by a dispatch of its own
            quantize = kernel.quantize()
            types = quantize.types()
            shapes = [ir.RankedTensorType.get([dyn, *types[r].shape[1:]], types[r].element_type) for r in quantize.results]
            inputs = _dispatch(_executable(quantize, module), [a], rows_v, shapes)
            inputs = ([a] if "x" in kernel.types() else []) + inputs  # DigitKernel of any row count
        else:
            inputs = [a]
        return _dispatch(name, inputs + consts, rows_v, [ir.RankedTensorType.get([dyn, n], f32)])[0]

    with m.matmul.location, ir.InsertionPoint(m.matmul):
        a_nd = t.to_builtin(m.matmul.operands[0], m.a)
    return _replace(m, a_nd, call)


def _activation(m: Match) -> tuple | str | None:
    """(a function making xq as a signless i8 tensor [b..., M, K] at the insertion point, sx,
    zx, whether xq is uint8, the dequantize) of a MatMul whose A is a dequantized activation, per
    tensor: a dq op (the stage took the node) or a DequantizeLinear left to IREE (it has other
    readers too); why the QDQ kernel does not read it; or None (A is no dequantize)."""
    if m.activation is not None:
        op, definition, sig = m.activation
        v, form = definition.by_role(op), definition.canonical(sig)
        e = of_type(ir.RankedTensorType(v["data"].type).element_type)
        if form.unpack != "none" or (form.reads_zero_point and form.zero_point_mode != "subtract"):
            return "its activation's zero point is not subtracted before scaling"
        if not all(r == ZERO for r in form.scale_map + (form.zp_map if form.reads_zero_point else ())):
            return "its activation's scale or zero point is not per tensor"
        f32 = ir.RankedTensorType(op.results[0].type).element_type == ir.F32Type.get()
        sx = _constant(v["scale"])
        zx = _constant(v["zero_point"]) if v["zero_point"] is not None and form.reads_zero_point else np.zeros((), np.int32)
        xq = v["data"]
        if (cast := made_by(xq, "tensor.bitcast")) is not None:
            xq = cast.operands[0]

        def codes(xq=xq):
            return xq
    else:
        op = m.matmul.operands[0].owner
        if not isinstance(op, (ir.Operation, ir.OpView)) or t.onnx_name(op) != "onnx.DequantizeLinear" or len(op.operands) < 2:
            return None
        tt, attrs = t.tensor_of(op.operands[0].type), read_attrs(op)
        if isinstance(tt, str) or isinstance(attrs, str):
            return "its activation is not a quantized tensor dq reads"
        e, f32 = tt.element, attrs.get("output_dtype", "f32") == "f32"
        sx, zx = _scale_and_zero_point(op)
        if (sx is not None and sx.size != 1) or (zx is not None and zx.size != 1):
            return "its activation's scale or zero point is not per tensor"

        def codes(value=op.operands[0], tt=tt):
            return ir.Operation.create(t.TO_BUILTIN, results=[tt.builtin()], operands=[value]).result
    if e.kind != "int" or e.bits != 8:
        return f"its activation is {e.name} (the kernel reads int8 and uint8)"
    if not f32:
        return "its activation is not dequantized to f32"
    if sx is None or zx is None or sx.dtype != np.float32:
        return "its activation's scale is not an f32 constant, or its zero point not a constant, of the model"
    return codes, np.float32(sx.reshape(-1)[0]), int(zx.reshape(-1)[0]), not e.signed, op


# QuantizeLinear's attributes the kernel's epilogue takes, and the values it takes (output_dtype
# typed the result, checked apart): axis means nothing to one scale; saturate applies to float8
# outputs only; block_size 0 is not blocked; precision FLOAT (1) is the f32 scale's own division.
_QUANTIZE_ATTRS = {"axis": lambda v: True, "saturate": lambda v: True, "block_size": lambda v: v == 0, "precision": lambda v: v in (0, 1)}


class _Epilogue(NamedTuple):
    """What the QDQ kernel computes after y (QdqKernel's requantize, mid and bias_add): the ops it
    stands for (the last first, then back to the MatMul's reader), r = [sy, zy(, sy', zy', s'',
    z'')] f32, the output's kind, the mid requantization's kind or None, b [N] f32 or None, and
    the bias's own DequantizeLinear (erased when nothing else reads it) or None."""

    ops: list
    r: np.ndarray
    out: str
    mid: str | None = None
    bias: np.ndarray | None = None
    bias_op: object = None


def _reader(value: ir.Value, operand: int | None = 0):
    """The op reading `value`, where it is the one reader (at `operand`, None: any), or None."""
    uses = list(value.uses)
    ok = len(uses) == 1 and (operand is None or uses[0].operand_number == operand)
    return uses[0].owner if ok else None


def _scale_and_zero_point(op) -> tuple:
    """(scale, zero point) of a Quantize- or DequantizeLinear node as constant arrays, each None
    where it is not a constant of the model; an absent (or `none`) zero point is 0."""
    scale = _torch_constant(op.operands[1]) if len(op.operands) > 1 else None
    has_zp = len(op.operands) > 2 and not isinstance(t.tensor_of(op.operands[2].type), str)  # else `none`
    return scale, _torch_constant(op.operands[2]) if has_zp else np.zeros((), np.int32)


def _per_tensor(op) -> tuple | str:
    """(scale f32, zero point int) of a Quantize- or DequantizeLinear's constant per-tensor
    operands (no zero point: 0), or why not."""
    scale, zp = _scale_and_zero_point(op)
    if scale is None or scale.dtype != np.float32 or scale.size != 1 or zp is None or zp.size != 1:
        return "scale is not one f32 constant, or its zero point not one constant"
    scale = np.float32(scale.reshape(-1)[0])
    return (scale, int(zp.reshape(-1)[0])) if np.isfinite(scale) and scale != 0 else f"scale is {scale}"


def _quantize_linear(op, y: t.TorchTensor) -> tuple | str | None:
    """(sy, zy, "u8" or "i8") of a QuantizeLinear of `y` the epilogue computes: per tensor with
    constants sy (f32, finite, not 0) and zy, 8-bit integer output, default attributes; why not;
    or None where `op` is no QuantizeLinear (or None)."""
    if op is None or t.onnx_name(op) != "onnx.QuantizeLinear":
        return None
    out = t.tensor_of(op.results[0].type)
    if isinstance(out, str) or out.element.kind != "int" or out.element.bits != 8 or out.shape != y.shape:
        return "its QuantizeLinear's output is not an int8 or uint8 tensor of the MatMul's shape"
    for name in op.attributes:
        short = name[len("torch.onnx.") :] if name.startswith("torch.onnx.") else None
        attr = op.attributes[name]
        if short is None or (short == "output_dtype" and isinstance(attr, ir.IntegerAttr)):
            continue  # output_dtype: the importer typed the result by it (checked above)
        if short not in _QUANTIZE_ATTRS or not isinstance(attr, ir.IntegerAttr) or not _QUANTIZE_ATTRS[short](ir.IntegerAttr(attr).value):
            return f"its QuantizeLinear's attribute '{short}' is not one the kernel takes"
    got = _per_tensor(op)
    return f"its QuantizeLinear's {got}" if isinstance(got, str) else (*got, "i8" if out.element.signed else "u8")


def _bias(add, value: ir.Value, n: int) -> tuple | None:
    """(b [N] f32, its DequantizeLinear or None) of an Add of `value` and a constant b of N
    values along the last dim: f32, or 8-bit integers dequantized per tensor (as quantize_static
    writes a bias: (q - z) * s in f32, as DequantizeLinear computes it); or None."""
    if t.onnx_name(add) != "onnx.Add" or len(add.operands) != 2:
        return None
    other = add.operands[1] if add.operands[0] == value else add.operands[0]
    tt, dq = t.tensor_of(other.type), None
    if isinstance(tt, str) or tt.element.name != "f32":
        return None
    b = _torch_constant(other)
    owner = other.owner
    if b is None and isinstance(owner, (ir.Operation, ir.OpView)) and t.onnx_name(owner) == "onnx.DequantizeLinear":
        q, scale = _torch_constant(owner.operands[0]), _per_tensor(owner)
        attrs = read_attrs(owner)
        if q is None or isinstance(scale, str) or q.dtype not in (np.int8, np.uint8) or isinstance(attrs, str) or set(attrs) - {"axis"}:
            return None
        b, dq = (q.astype(np.float32) - np.float32(scale[1])) * scale[0], owner
    if b is None or b.dtype != np.float32 or b.size != n or b.shape[-1:] != (n,):
        return None
    return b.reshape(n), dq


def _requantize(m: Match) -> _Epilogue | str | None:
    """The epilogue of a MatMul whose result y only a QuantizeLinear reads (`_quantize_linear`),
    after a constant bias Add (y + b), or after its own QuantizeLinear and DequantizeLinear per
    tensor (DQ(Q(y)) + b, as quantize_static writes it); why a QuantizeLinear reading y alone is
    not taken; or None."""
    y, n = m.matmul.results[0], m.kn[1]
    first = _reader(y, None)
    if first is None:
        return None
    if (bias := _bias(first, y, n)) is not None:  # y + b
        q = _reader(first.results[0])
        got = _quantize_linear(q, m.y)
        return None if not isinstance(got, tuple) else _Epilogue([q, first], np.array(got[:2], np.float32), got[2], None, *bias)
    got = _quantize_linear(first, m.y) if first.operands[0] == y else None
    if not isinstance(got, tuple):
        return got
    plain = _Epilogue([first], np.array(got[:2], np.float32), got[2])
    dq = _reader(first.results[0])  # DQ(Q(y)) + b, then a QuantizeLinear
    if dq is None or t.onnx_name(dq) != "onnx.DequantizeLinear" or t.tensor_of(dq.results[0].type) != m.y:
        return plain
    attrs, back = read_attrs(dq), _per_tensor(dq)
    add = _reader(dq.results[0], None)
    if isinstance(attrs, str) or set(attrs) - {"axis"} or isinstance(back, str) or add is None or (bias := _bias(add, dq.results[0], n)) is None:
        return plain
    q = _reader(add.results[0])
    last = _quantize_linear(q, m.y)
    if not isinstance(last, tuple):
        return plain
    return _Epilogue([q, add, dq, first], np.array([*last[:2], *got[:2], *back], np.float32), last[2], got[2], *bias)


def _qdq_inputs(m: Match, target: Target) -> tuple | str:
    """(QdqKernel, xq, the repacked weights, s, zw or None, c) of a QDQ MatMul, or why it keeps
    the float route. The integer algebra and its bound: docs/semantics.md#qdq-graphs-through-iree."""
    k, n = m.kn
    act = _activation(m)
    if act is None or isinstance(act, str):
        return act
    codes_x, sx, zx, unsigned_x, _ = act
    got = _weights(m)
    if isinstance(got, str):
        return got
    e, codes, (block, sw), zw = got  # 8-bit weights (below): their codes [K, N] as stored
    if e.bits != 8 or block != k:
        return f"its weights are {e.name} blocked by {block} (the kernel reads 8-bit weights per tensor or per column)"
    wq = (codes.view(np.int8) if e.signed else codes).astype(np.int64)
    centred = wq - (zw.astype(np.int64) if zw is not None else 0)  # wq - zw [K, N]
    low, high = (0, 255) if unsigned_x else (-128, 127)
    largest = max(zx - low, high - zx) * int(np.abs(centred).sum(axis=0).max())  # >= |d| for every x
    kind = QdqKernel if target.avx512vnni else QdqAvx2Kernel  # AVX2: vpmaddwd, the same results
    kernel = kind(k, n, k, 8, e.signed, zw is not None, unsigned_x=unsigned_x)
    why = kind.why_not(k, n, e.bits, largest)
    if why:
        return why
    shift = zx - 128 if unsigned_x else zx  # xq - zx = v - shift, v = xq (int8) or xq - 128 (uint8)
    c = -shift * centred.sum(axis=0, keepdims=True)  # |c| <= largest < 2^31
    with np.errstate(over="ignore", under="ignore"):
        s = sx * sw  # f32 x f32, rounded once to f32
    if not np.all(np.isfinite(s) & ((s == 0) | (np.abs(s) >= np.finfo(np.float32).tiny))):
        return "the product of its activation's and weights' scales leaves f32's normal range"
    return kernel, codes_x, kernel.repack(codes, s, zw, c)


class _QdqMade(NamedTuple):
    """What one QDQ MatMul's weights and activation share: `_qdq_inputs` and the constants."""

    inputs: tuple
    consts: list


def rewrite_qdq(m: Match, module, made: dict, remarks: list, target: Target):
    """Rewrite one QDQ MatMul (A and B dequantized) into a dispatch of the exact integer kernel
    reading xq, and the QuantizeLinear reading its result into the kernel's epilogue where it
    can (else a remark): why not (a str; nothing changed), None (A is no dequantize), or the op
    now standing for the MatMul (or its QuantizeLinear)."""
    a = m.activation[0] if m.activation is not None else m.matmul.operands[0].owner
    key = (m.dq_op.operation, a.operation if isinstance(a, (ir.Operation, ir.OpView)) else None)
    got = _qdq_inputs(m, target) if key not in made else made[key].inputs
    if got is None or isinstance(got, str):
        return got
    kernel, codes_x, (w, s, z, c) = got
    f32, i8, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    requantize = _requantize(m)
    if isinstance(requantize, str):
        remarks.append((next(iter(m.matmul.results[0].uses)).owner, f"QuantizeLinear not fused into dq's QDQ kernel: {requantize}"))
    if not isinstance(requantize, _Epilogue):
        requantize = None
    else:  # the same kernel, its epilogue the QuantizeLinear reading y (after a bias)
        kernel = dataclasses.replace(kernel, requantize=requantize.out, mid=requantize.mid, bias_add=requantize.bias is not None)
    name = _executable(kernel, module)
    if key not in made:
        with ir.InsertionPoint(m.dq_op), m.matmul.location:
            made[key] = _QdqMade(got, [_resource(w, i8, "dq_kernel_w"), _resource(s, f32, "dq_kernel_s")]
                                 + ([_resource(z, i8, "dq_kernel_z")] if z is not None else []) + [_resource(c, i32, "dq_kernel_c")])  # fmt: skip
    consts, also, out = made[key].consts, [], f32
    with m.matmul.location, ir.InsertionPoint(m.matmul):
        xq = codes_x()
        if requantize is not None:  # this MatMul's own bias, scales and zero points
            also, out, r = requantize.ops, i8, requantize.r
            if requantize.bias is not None:
                consts = consts + [_resource(kernel.per_column(requantize.bias), f32, "dq_kernel_b")]
            consts = consts + [arith.constant(ir.RankedTensorType.get([r.size], f32), ir.DenseElementsAttr.get(r))]
    done = _replace(m, xq, lambda a, rows_v, dyn: _dispatch(name, [a] + consts, rows_v, [ir.RankedTensorType.get([dyn, m.kn[1]], out)])[0], also)
    if requantize is not None and requantize.bias_op is not None and not list(requantize.bias_op.results[0].uses):
        requantize.bias_op.erase()
    return done


def run(root, int8_activations: bool = False) -> bool:
    remarks = []
    found = matches(root, remarks)
    if found is None:
        return False
    if found and not root.context.allow_unregistered_dialects:  # creating IREE's ops would abort
        root.location.emit_error("torch-onnx-dq-matmul-iree-cpu creates IREE's stream and flow ops: allow unregistered dialects (--allow-unregistered-dialect)")
        return False
    target, options = Target.of(root), Options(int8_activations or INT8_ACTIVATIONS in root.attributes)
    if options.int8_activations and not target.avx512vnni:
        root.location.emit_error(f"int8 activations ({INT8_ACTIVATIONS}) need AVX-512 VNNI, which the target lacks "
                                 f"(dq-target-features tags the module {AVX512VNNI} where the host has it)")  # fmt: skip
        return False
    made, done, activations = {}, set(), set()
    for m in found:
        got = rewrite_qdq(m, root, made, remarks, target) if target.avx512vnni or target.x86_avx2 else None
        if got is not None and not isinstance(got, str):
            done.add(m.dq_op)
            if m.activation is not None:
                activations.add(m.activation[0])
            continue
        qdq = got
        got = rewrite(m, root, made, target, options)
        if isinstance(got, str):
            remarks.append((m.matmul, f"MatMul not given dq's CPU kernel (fused contraction instead): {got}"))
            continue
        if qdq is not None:
            remarks.append((got, f"QDQ MatMul given dq's float route, not its integer kernel: {qdq}"))
        done.add(m.dq_op)
        remarks += [(got, text) for text in made[m.dq_op.operation].choice.remarks()]
    erase_unused(done | activations)  # an activation's dequantize no MatMul reads any more
    emit_remarks(root, remarks)
    return True


PASS = Pass("torch-onnx-dq-matmul-iree-cpu", "Rewrite ONNX MatMuls of constant 4/8-bit weights into dispatches of dq's matmul kernel for IREE's llvm-cpu backend",
            run, options={"int8-activations": False})  # fmt: skip
