"""A search's context: what every call of one problem's search passes and uses again, in one
record that a compiled call takes as one argument: the tree, task, joints and seed-table bundles
(see :mod:`.bundles`) and the search's work arrays (``search.search_workspace``).

Why one record: numba wraps each array passed from Python in a reference-counted record of its
own and releases it under the GIL afterwards, ~90 ns an array (measured on arm7: the 56 work
arrays passed into a function that reads one, 5.0-5.3 µs a call), and a search made its ~56 work
arrays anew at each call (2-4 µs). A numba ``StructRef`` crosses as one pointer (a call taking
the bundles and work arrays in one: 0.4-0.8 µs, against 1.5-2.4 µs for the bundles alone as
arrays) and keeps the work arrays between calls. Functions taking one are cached as any kernel
(the type is defined here, in a module, not per process).

Without numba (and in the plain-Python copy, :func:`~.jit.python_module`) the record is a
:class:`PlainContext`, with the same attributes.
"""

from __future__ import annotations

from .jit import COMPILED, numba_types, overload, structref

__all__ = ["CONTEXT_FIELDS", "PlainContext", "new_context"]

#: The record's attributes, in the order :func:`new_context` takes them.
CONTEXT_FIELDS = ("tree", "task", "joints", "table", "workspace")


class PlainContext:
    """A search context in plain Python."""

    __slots__ = CONTEXT_FIELDS

    def __init__(self, tree, task, joints, table, workspace):
        self.tree, self.task, self.joints, self.table, self.workspace = tree, task, joints, table, workspace


def new_context(tree, task, joints, table, workspace):
    """The record of the bundles ``tree``, ``task``, ``joints``, ``table`` and the work arrays
    ``workspace``; in compiled code (its only caller there: ``search.search_context``) a numba
    ``StructRef`` of their types."""
    return PlainContext(tree, task, joints, table, workspace)


if COMPILED:

    @structref.register
    class SearchContextType(numba_types.StructRef):
        """numba's type of a search context: one per combination of its fields' types."""

        def preprocess_fields(self, fields):
            return tuple((name, numba_types.unliteral(field_type)) for name, field_type in fields)

    class SearchContext(structref.StructRefProxy):
        """A search context in Python: handed back to compiled calls, not read in Python."""

    structref.define_boxing(SearchContextType, SearchContext)

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
