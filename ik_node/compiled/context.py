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
(the type is defined here, in a module, not per process).

Without numba (and in the plain-Python copy, :func:`~.jit.python_module`) a record is a
:class:`PlainContext`, with the same attributes.
"""

from __future__ import annotations

from .jit import COMPILED, numba_types, overload, structref

__all__ = ["CLOSED_FORM_FIELDS", "CONTEXT_FIELDS", "PlainContext", "new_closed_form_context", "new_context"]

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


def new_closed_form_context(decomposition, check, limits, workspace):
    """The closed-form record of the tuples ``decomposition``, ``check``, ``limits`` and
    ``workspace``; in compiled code (its only caller there: ``solution_sets.closed_form_context``)
    a numba ``StructRef`` of their types."""
    return PlainContext(CLOSED_FORM_FIELDS, (decomposition, check, limits, workspace))


if COMPILED:

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
