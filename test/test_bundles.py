"""The kernels' bundles are read and built by name (ik_node/compiled/bundles.py): each builder puts
each keyword at the slot its constant names, and the search's arguments follow ``search_many``'s
parameters."""

from __future__ import annotations

import inspect

import pytest

from ik_node.compiled import bundles, context, search
from ik_node.solver.search_call import SearchArguments

BUILDERS = [
    bundles.tree_bundle,
    bundles.task_bundle,
    bundles.table_bundle,
    bundles.collision_bundle,
    bundles.tuning_bundle,
]


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda builder: builder.__name__)
def test_each_keyword_lands_at_the_slot_of_its_name(builder):
    names = list(inspect.signature(builder).parameters)
    bundle = builder(**{name: name for name in names})
    assert len(bundle) == len(names)
    assert {name: bundle[getattr(bundles, name.upper())] for name in names} == {name: name for name in names}


def test_the_search_arguments_are_search_many_s_trailing_parameters_and_its_context_s():
    def parameters(function) -> list:
        return list(inspect.signature(getattr(function, "py_func", function)).parameters)

    trailing = ["tuning", "method", "solve_type", "posture", "collision"]
    assert parameters(search.search_many)[-len(trailing) :] == trailing
    named = SearchArguments(**{field: field for field in SearchArguments._fields})
    assert named.trailing == tuple(trailing)
    assert set(SearchArguments._fields) == set(trailing) | set(parameters(search.search_context)) - {"nq"}
    assert parameters(search.search_context)[:4] == list(context.CONTEXT_FIELDS[:4])
    assert context.CONTEXT_FIELDS[4] == "workspace"
