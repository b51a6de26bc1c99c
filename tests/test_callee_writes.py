"""A function that compiled code calls gets its arguments rebuilt from their leaves, so a write into one of their
containers (``lst.append``, ``d[k] = v``, ``lst[0] = v``, ``state.x = v``) would not reach the caller's object, as
Python's would: numbax gave the caller's unchanged value (a silent wrong result). A local function's write into
its enclosing function's container made generated code read the local function's names there, and a write into
a module's list happened once, while compiling. Such writes are refused at the user's line; writes into
containers the function made itself are Python's."""
import numpy as np
import pytest

import numbax


def appends(lst, x):
    lst.append(x * 2.0)


def stores(d, x):
    d["b"] = x * 3.0


def sets_first(lst, x):
    lst[0] = x * 5.0


def through_append(x):
    lst = [x]
    appends(lst, x)
    return len(lst)


def through_store(x):
    d = {"a": x}
    stores(d, x)
    return len(d)


def extends(lst, x):
    lst += [x * 2.0]


def through_extend(x):
    lst = [x]
    extends(lst, x)
    return len(lst)


def through_set(x):
    lst = [x, x]
    sets_first(lst, x)
    return lst[0]


@pytest.mark.parametrize("fun, what", [(through_append, "`append`"), (through_store, "assignment into an element"),
                                       (through_set, "assignment into an element"),
                                       (through_extend, "`+=`")])
def test_writes_into_a_callees_arguments_are_refused(fun, what):
    with pytest.raises(numbax.NumbaxSpecializationError, match="the caller would not see the change") as info:
        numbax.jit(fun)(np.ones(2))
    assert what in str(info.value) and "test_callee_writes.py" in str(info.value)


def own_containers(x):
    parts = [x]
    table = {}
    table |= {"first": parts[0]}
    parts += []
    record = parts.append
    for k in (1.0, 2.0, 3.0):  # unrolled: a loop over a container
        record(x * k)
    table["sum"] = sum(parts)
    return table["sum"], len(parts)


def closes_over_a_list(x):
    parts = []

    def add(v):
        parts.append(v)  # the enclosing function's list would hold the local function's names

    add(x)
    return len(parts)


def closes_over_a_filled_list(x):
    parts = [x]

    def add(v):
        parts.append(v)  # rebuilt in ``add`` from the enclosing function's leaves

    add(x)
    return len(parts)


SEEN = []


def appends_to_a_module_list(x):
    SEEN.append(x)  # once while compiling, not at each call
    return x


@pytest.mark.parametrize("fun", [closes_over_a_list, closes_over_a_filled_list, appends_to_a_module_list])
def test_writes_into_values_the_function_did_not_make_are_refused(fun):
    with pytest.raises(numbax.NumbaxSpecializationError, match="the caller would not see the change"):
        numbax.jit(fun)(np.ones(2))
    assert SEEN == []


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_writes_into_own_containers_are_pythons(backend):
    x = np.array([1.0, -2.0])
    total, count = numbax.jit(own_containers, backend=backend)(x)
    np.testing.assert_allclose(total, 7 * x)
    assert count == 4


TRACES = []


def counts_its_compilations(x):
    TRACES.append(1)  # a compile-time value: written while compiling, as JAX writes while tracing
    return x * 2.0


def test_a_compile_time_value_written_into_a_module_list_is_written_while_compiling(tmp_path):
    old = numbax.config.read("cache_dir")
    numbax.config.update("cache_dir", str(tmp_path / "cache"))  # compiled here, not loaded from an earlier run
    try:
        jitted = numbax.jit(counts_its_compilations, backend="python")
        np.testing.assert_array_equal(jitted(np.ones(2)), 2.0)
        np.testing.assert_array_equal(jitted(np.ones(3)), 2.0)  # the same specialization (dtype and rank)
    finally:
        numbax.config.update("cache_dir", old)
    assert TRACES == [1]
