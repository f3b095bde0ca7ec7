"""The kernels' bundles are read and built by name (ik_node/compiled/bundles.py): each builder puts
each keyword at the slot its constant names, and the search's arguments follow ``search_many``'s
parameters."""

from __future__ import annotations

import inspect

import pytest

from ik_node.compiled import bundles, search
from ik_node.solver.search_call import SearchArguments

BUILDERS = [
    bundles.tree_bundle,
    bundles.task_bundle,
    bundles.table_bundle,
    bundles.collision_bundle,
    bundles.settings_bundle,
]


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda builder: builder.__name__)
def test_each_keyword_lands_at_the_slot_of_its_name(builder):
    names = list(inspect.signature(builder).parameters)
    bundle = builder(**{name: name for name in names})
    assert len(bundle) == len(names)
    assert {name: bundle[getattr(bundles, name.upper())] for name in names} == {name: name for name in names}


def test_the_search_arguments_are_search_many_s_trailing_parameters():
    kernel = getattr(search.search_many, "py_func", search.search_many)
    parameters = list(inspect.signature(kernel).parameters)
    assert list(SearchArguments._fields) == parameters[-len(SearchArguments._fields) :]
