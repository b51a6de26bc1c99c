"""k-means clustering by Lloyd's iterations: point-to-centroid distances with ``vmap``, assignments with
``argmin``, centroid updates in a jit'ed step, run on numbax by its imports alone."""
import numbax as jax
import numbax.numpy as jnp
from numbax import random

K = 3


def squared_distances(point, centroids):
    return jnp.sum((centroids - point) ** 2, axis=1)


@jax.jit
def lloyd_step(points, centroids):
    distances = jax.vmap(squared_distances, in_axes=(0, None))(points, centroids)
    assignment = jnp.argmin(distances, axis=1)
    one_hot = (assignment[:, None] == jnp.arange(K)[None, :]).astype(points.dtype)
    counts = jnp.sum(one_hot, axis=0)
    new_centroids = (one_hot.T @ points) / jnp.maximum(counts, 1.0)[:, None]
    inertia = jnp.sum(jnp.min(distances, axis=1))
    return new_centroids, inertia, counts


def main():
    kc, kp, ki = random.split(random.PRNGKey(11), 3)
    true_centers = jnp.array([[0.0, 0.0], [4.0, 1.0], [1.0, 5.0]])
    labels = random.randint(kc, (60,), 0, K)
    points = true_centers[labels] + 0.7 * random.normal(kp, (60, 2))
    centroids = points[random.choice(ki, 60, (K,), replace=False)]
    for i in range(6):
        centroids, inertia, counts = lloyd_step(points, centroids)
        print(f"iteration {i} inertia {float(inertia):.10f} sizes " + " ".join(str(int(c)) for c in counts))
    order = jnp.argsort(centroids[:, 0])
    for c in centroids[order]:
        print(f"centroid {float(c[0]):.10f} {float(c[1]):.10f}")


if __name__ == "__main__":
    main()
