"""harness.py check --test: the tests named, an unknown name refused."""

import pytest

from rmapbench.check.catalogue import catalogue
from rmapbench.check.suite import select
from rmapbench.errors import UserError


def test_select_keeps_the_tests_named_in_catalogue_order():
    _, tests = catalogue(False)
    picked = select(tests, ("orphan", "inject"))
    assert [t.name for t in picked] == [t.name for t in tests
                                        if t.name in ("orphan", "inject")]
    assert select(tests, ()) == tests


def test_select_refuses_an_unknown_name_and_lists_the_known():
    _, tests = catalogue(True)
    with pytest.raises(UserError) as err:
        select(tests, ("inject", "nosuch"))
    assert "nosuch" in str(err.value) and "torture-cow" in str(err.value)
