"""Contexts: what every call of one problem's compiled entry passes and uses again, in one record
that a compiled call takes as one argument. Two kinds:

* a search's (:data:`CONTEXT_FIELDS`): the tree, task, joints and seed-table bundles (see
  :mod:`.bundles`) and the search's work arrays (``search.search_workspace``);
* a closed-form solution set's (:data:`CLOSED_FORM_FIELDS`): the decomposition's arrays, the FK
  check's, the limits and metric, and the set's work arrays
  (``solution_sets.closed_form_context``).

Why one record: numba wraps each array passed from Python in a reference-counted record of its
own and releases it under the GIL afterwards, ~90 ns an array (measured on arm7: the 56 work
arrays passed into a function that reads one, 5.0-5.3 µs a call), and a search made its ~56 work
arrays anew at each call (2-4 µs). A numba ``StructRef`` crosses as one pointer (a call taking
the bundles and work arrays in one: 0.4-0.8 µs, against 1.5-2.4 µs for the bundles alone as
arrays) and keeps the work arrays between calls. Functions taking one are cached as any kernel
(the type is defined here, in a module, not per process). A kernel reads a record's fields with
:func:`record_fields` (borrowed, without a reference counted per array: numba's attribute read
counts one for each of a search context's ~80 arrays).

Without numba (and in the plain-Python copy, :func:`~.jit.python_module`) a record is a
:class:`PlainContext`, with the same attributes.
"""

from __future__ import annotations

from .jit import JIT_ENABLED, cgutils, intrinsic, llvm_ir, numba_types, overload, structref

__all__ = [
    "CLOSED_FORM_FIELDS",
    "CONTEXT_FIELDS",
    "PlainContext",
    "new_closed_form_context",
    "new_context",
    "record_fields",
]

#: A search context's attributes, in the order :func:`new_context` takes them.
CONTEXT_FIELDS = ("tree", "task", "joints", "table", "workspace")
#: A closed-form context's attributes, in the order :func:`new_closed_form_context` takes them.
CLOSED_FORM_FIELDS = ("decomposition", "check", "limits", "workspace")


class PlainContext:
    """A context in plain Python: its fields as attributes."""

    def __init__(self, fields: tuple, values: tuple):
        self.__dict__.update(zip(fields, values))


def new_context(tree, task, joints, table, workspace):
    """The search record of the bundles ``tree``, ``task``, ``joints``, ``table`` and the work
    arrays ``workspace``; in compiled code (its only caller there: ``search.search_context``) a
    numba ``StructRef`` of their types."""
    return PlainContext(CONTEXT_FIELDS, (tree, task, joints, table, workspace))


def record_fields(record):
    """A record's fields as a tuple, in their order (:data:`CONTEXT_FIELDS`,
    :data:`CLOSED_FORM_FIELDS`).

    In compiled code, read without counting references: numba's attribute read counts a
    reference to every array in a field (tuples of them included) and its caller releases them
    again, an atomic increment and decrement each (a search context holds ~80 arrays: with the
    copy of them all into the reader's frame, ~1 us of the ~3.4 us compiled call on a goal
    already reached, arm7). A :func:`~.jit.kernel` (no reference counts) borrows the fields from
    the record, which its caller keeps alive; in a function with reference counts they are
    counted, as numba's own read counts them. Written into its caller, so that only the fields
    used are loaded."""
    return tuple(record.__dict__.values())


def new_closed_form_context(decomposition, check, limits, workspace):
    """The closed-form record of the tuples ``decomposition``, ``check``, ``limits`` and
    ``workspace``; in compiled code (its only caller there: ``solution_sets.closed_form_context``)
    a numba ``StructRef`` of their types."""
    return PlainContext(CLOSED_FORM_FIELDS, (decomposition, check, limits, workspace))


if JIT_ENABLED:

    @structref.register
    class SearchContextType(numba_types.StructRef):
        """numba's type of a search context: one per combination of its fields' types. (Class
        names are kept: numba's cache index names them, and reads every entry of an index.)"""

        def preprocess_fields(self, fields):
            return tuple((name, numba_types.unliteral(field_type)) for name, field_type in fields)

    @structref.register
    class ClosedFormContextType(SearchContextType):
        """numba's type of a closed-form context."""

    class SearchContext(structref.StructRefProxy):
        """A search context in Python: handed back to compiled calls, not read in Python."""

    class ClosedFormContext(structref.StructRefProxy):
        """A closed-form context in Python: handed back to compiled calls, not read in Python."""

    structref.define_boxing(SearchContextType, SearchContext)
    structref.define_boxing(ClosedFormContextType, ClosedFormContext)

    @overload(new_context)
    def _compiled_new_context(tree, task, joints, table, workspace):
        context_type = SearchContextType(list(zip(CONTEXT_FIELDS, (tree, task, joints, table, workspace))))

        def make(tree, task, joints, table, workspace):
            context = structref.new(context_type)
            context.tree = tree
            context.task = task
            context.joints = joints
            context.table = table
            context.workspace = workspace
            return context

        return make

    @intrinsic
    def _borrowed_fields(typing_context, record_type):
        """:func:`record_fields` in compiled code: the fields of a record (a
        :class:`SearchContextType` or :class:`ClosedFormContextType`) as a tuple, read through its
        MemInfo's data pointer, the fourth member of the runtime's ``MemInfo`` (``refct``,
        ``dtor``, ``dtor_info``, ``data``, ...: numba's ``nrt.h``) as numba's
        ``NRT_MemInfo_data_fast`` reads it (its ``nrt.meminfo_data`` refuses to be called in code
        without reference counts). An intrinsic, written into its caller: no function of its own
        to compile for the record's type (an overload's took 1.4 s of the default compile)."""
        names = list(record_type.field_dict)
        fields = numba_types.Tuple([record_type.field_dict[name] for name in names])

        def codegen(context, builder, signature, arguments):
            record = cgutils.create_struct_proxy(record_type)(context, builder, value=arguments[0])
            word, pointer = context.get_value_type(numba_types.intp), llvm_ir.IntType(8).as_pointer()
            meminfo_type = llvm_ir.LiteralStructType([word, pointer, pointer, pointer])  # (up to data)
            meminfo = builder.bitcast(record.meminfo, meminfo_type.as_pointer())
            data = builder.load(cgutils.gep(builder, meminfo, 0, 3))
            payload_type = record_type.get_data_type()
            payload_pointer = context.data_model_manager[payload_type].get_value_type().as_pointer()
            payload = cgutils.create_struct_proxy(payload_type)(
                context, builder, ref=builder.bitcast(data, payload_pointer)
            )
            values = context.make_tuple(builder, fields, [getattr(payload, name) for name in names])
            if context.enable_nrt:  # (a caller with reference counts owns what it is given)
                context.nrt.incref(builder, fields, values)
            return values

        return fields(record_type), codegen

    record_fields = _borrowed_fields  # (compiled code's; the function above is plain Python's)

    @overload(new_closed_form_context)
    def _compiled_new_closed_form_context(decomposition, check, limits, workspace):
        fields = zip(CLOSED_FORM_FIELDS, (decomposition, check, limits, workspace))
        context_type = ClosedFormContextType(list(fields))

        def make(decomposition, check, limits, workspace):
            context = structref.new(context_type)
            context.decomposition = decomposition
            context.check = check
            context.limits = limits
            context.workspace = workspace
            return context

        return make
