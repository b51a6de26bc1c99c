"""The registry's family helpers write the entries a hand-written template would: ``def_elementwise``."""
import gast
import numpy as np
import pytest

from numbax.primitives import registry
from numbax.primitives.registry import TRANSPOSED, _times_g


@pytest.mark.parametrize("derivative, line", [
    ("1.0 - ans * ans", "g * (1.0 - ans * ans)"),
    ("ans * 0.5", "g * ans * 0.5"),
    ("1.0 / (x * 2.0)", "g / (x * 2.0)"),
    ("-np.sin(x)", "-g * np.sin(x)"),
    ("-1.0 / np.sqrt(1.0 - x * x)", "-g / np.sqrt(1.0 - x * x)"),
    ("0.5 / ans", "g * 0.5 / ans"),
])
def test_the_derivative_multiplies_g_as_a_rule_writes_it(derivative, line):
    assert _times_g(derivative) == line
    x, ans, g = 0.3, np.tanh(0.3), 1.7
    assert eval(line, {"np": np, "x": x, "ans": ans, "g": g}) == pytest.approx(
        g * eval(derivative, {"np": np, "x": x, "ans": ans}), rel=1e-15)


def test_an_elementwise_entry_holds_every_rule():
    entry = registry.entry(np.tanh)
    assert entry.jvp is TRANSPOSED
    assert entry.aval(None, [("f", 2)]) == ("f", 2) and entry.aval(None, [("i", 1)]) == ("f", 1)
    assert entry.shape is not None
    (line,) = entry.vjp.template.body
    assert gast.unparse(line).strip() == "d[x] = g * (1.0 - ans * ans)"
    assert entry.vjp.template.params == ["x"] and entry.vjp.template.differentiated == {"x"}
    assert registry.entry(np.square).aval(None, [("i", 1)]) == ("i", 1)  # its own kind, as NumPy squares


def test_a_linear_helper_entry_is_the_helper_of_the_tangent():
    from numbax import runtime as rt

    template = registry.entry(rt.unreduce).jvp.template
    assert [gast.unparse(line).strip() for line in template.body] == ["d[cotangent] = rt.unreduce(g, a, axis, keepdims)"]
    assert template.params == ["cotangent", "a", "axis", "keepdims"]
    assert template.differentiated == {"cotangent"} and template.no_derivative == {"a"}
