"""NumPy's elementwise functions, as a user composes them: activations, losses, special functions."""
import numpy as np
from numpy import exp, tanh
from scipy.special import erf, expit, logsumexp

from . import Case, normal, uniform

W5 = np.array([0.5, -1.0, 2.0, 0.25, -0.75])


def tanh_and_sigmoid(x):
    return np.sum(np.tanh(x) + 1.0 / (1.0 + np.exp(-x)))


def softplus(x):
    return np.sum(np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0))


def log_softmax_entry(x):
    m = np.max(x)
    return x[2] - m - np.log(np.sum(np.exp(x - m)))


def trig_mix(x):
    return np.sum(np.sin(x) * np.cos(2.0 * x) + np.tan(0.3 * x))


def inverse_trig(x):
    return np.sum(np.arcsin(x) * W5 + np.arccos(x) ** 2 + np.arctan(3.0 * x))


def hyperbolic(x):
    return np.sum(np.sinh(x) * np.cosh(0.5 * x) + np.arcsinh(2.0 * x) + np.tanh(x) ** 2)


def inverse_hyperbolic(x, y):
    return np.sum(np.arccosh(y) * np.arctanh(x))


def roots(x):
    return np.sum(np.sqrt(x) + np.cbrt(x) * W5 + x ** 0.5 * np.sqrt(x + 1.0))


def logarithms(x):
    return np.sum(np.log(x) * W5 + np.log2(x) + np.log10(x * x))


def exponentials(x):
    return np.sum(np.exp2(x) + np.expm1(0.5 * x) * W5 + exp(-x * x))


def angle_and_radius(x, y):
    return np.sum(np.arctan2(y, x) * W5 + np.hypot(x, y))


def elementwise_max_min(x, y):
    return np.sum(np.maximum(x, y) * W5 + np.minimum(x, 0.3 * y) ** 2)


def clip_and_where(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2 + np.where(x > 0.0, x, 0.1 * x) * W5)


def smooth_max(x, y):
    return np.sum(np.logaddexp(x, y) + np.logaddexp2(2.0 * x, y) * W5)


def square_and_reciprocal(x):
    return np.sum(np.square(x) * W5 + np.reciprocal(x) + np.power(x, 3) - np.power(x, 0.5))


def power_of_arrays(x, p):
    return np.sum(np.power(x, p) * W5)


def abs_times_sign(x):
    return np.sum(np.abs(x) * np.sign(x) * W5 + np.abs(x) ** 1.5)


def gelu_tanh(x):
    return np.sum(0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x ** 3))))


def gaussian_cdf(x):
    return np.sum(0.5 * (1.0 + erf(x / np.sqrt(2.0))) * W5)


def logistic_loss(w, x, y):
    p = expit(x @ w)
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def log_sum_exp_scipy(x):
    return logsumexp(x) + np.sum(logsumexp(x, axis=0) * W5[:4])


def sinc_and_fmax(x, y):
    return np.sum(np.sinc(x) + np.fmax(x, y) * W5 - np.fmin(x, 0.5 * y))


def floor_and_round_are_flat(x):
    return np.sum(x * np.floor(x) + np.round(x) + np.ceil(2.0 * x) * x)


CASES = [
    Case(tanh_and_sigmoid, lambda: (normal(1100, 5),)),
    Case(softplus, lambda: (normal(1101, 5, scale=2.0),)),
    Case(log_softmax_entry, lambda: (normal(1102, 5),)),
    Case(trig_mix, lambda: (normal(1103, 5),)),
    Case(inverse_trig, lambda: (uniform(1104, 5, low=-0.9, high=0.9),)),
    Case(hyperbolic, lambda: (normal(1105, 5),)),
    Case(inverse_hyperbolic, lambda: (uniform(1106, 5, low=-0.9, high=0.9), uniform(1107, 5, low=1.2, high=3.0)),
         argnums=(0, 1)),
    Case(roots, lambda: (uniform(1108, 5),)),
    Case(logarithms, lambda: (uniform(1109, 5),)),
    Case(exponentials, lambda: (normal(1110, 5),)),
    Case(angle_and_radius, lambda: (normal(1111, 5), normal(1112, 5)), argnums=(0, 1)),
    Case(elementwise_max_min, lambda: (normal(1113, 5), normal(1114, 5)), argnums=(0, 1)),
    Case(clip_and_where, lambda: (normal(1115, 5),)),
    Case(smooth_max, lambda: (normal(1116, 5), normal(1117, 5)), argnums=(0, 1)),
    Case(square_and_reciprocal, lambda: (uniform(1118, 5),)),
    Case(power_of_arrays, lambda: (uniform(1119, 5), normal(1120, 5)), argnums=(0, 1)),
    Case(abs_times_sign, lambda: (normal(1121, 5),)),
    Case(gelu_tanh, lambda: (normal(1122, 5),)),
    Case(gaussian_cdf, lambda: (normal(1123, 5),)),
    Case(logistic_loss, lambda: (normal(1124, 3), normal(1125, 6, 3), (normal(1126, 6) > 0).astype(float))),
    Case(log_sum_exp_scipy, lambda: (normal(1127, 3, 4),)),
    Case(sinc_and_fmax, lambda: (normal(1128, 5), normal(1129, 5)), argnums=(0, 1)),
    Case(floor_and_round_are_flat, lambda: (normal(1130, 5, scale=3.0),)),
]
