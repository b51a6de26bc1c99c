"""Projectile shooting: the launch angle that lands a ball with air drag on a target, by gradient descent
through a simulation that steps with ``lax.while_loop`` until the ball reaches the ground, the landing point
interpolated between the last two steps; the derivative of the landing distance comes from forward mode
(``jax.jvp``, ``jax.jacfwd``), which goes through ``while_loop``."""
import numbax as jax
import numbax.numpy as jnp
from numbax import lax

SPEED = 20.0
DRAG = 0.05
GRAVITY = 9.81
DT = 0.001
TARGET = 15.0


def landing_distance(angle):
    def still_flying(carry):
        previous, current = carry
        return (current[1] >= 0.0) & (current[4] < 10.0)

    def advance(carry):
        previous, current = carry
        x, y, vx, vy, t = current
        speed = jnp.sqrt(vx * vx + vy * vy)
        ax = -DRAG * speed * vx
        ay = -GRAVITY - DRAG * speed * vy
        return current, (x + DT * vx, y + DT * vy, vx + DT * ax, vy + DT * ay, t + DT)

    start = (0.0, 0.0, SPEED * jnp.cos(angle), SPEED * jnp.sin(angle), 0.0)
    before, after = lax.while_loop(still_flying, advance, advance((start, start)))
    # the ground crossing between the last two steps, linearly: its position moves with the flight time
    fraction = before[1] / (before[1] - after[1])
    return before[0] + fraction * (after[0] - before[0])


def miss(angle):
    return (landing_distance(angle) - TARGET) ** 2


@jax.jit
def update(angle):
    value, slope = jax.jvp(miss, (angle,), (1.0,))
    return angle - 1e-3 * slope, value


def main():
    angle = 0.3
    for i in range(30):
        angle, value = update(angle)
        if i % 6 == 0:
            print(f"step {i:2d}  angle {float(angle):.10f}  squared miss {float(value):.10e}")
    print(f"angle {float(angle):.10f} rad  lands at {float(landing_distance(angle)):.10f}")
    print(f"d distance / d angle {float(jax.jacfwd(landing_distance)(angle)):.10f}")


if __name__ == "__main__":
    main()
