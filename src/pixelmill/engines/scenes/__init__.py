"""Product scenes: procedural backdrops, compositing (shadows, reflections, harmonisation), the
scene catalogue and the ``scenes`` engine."""
