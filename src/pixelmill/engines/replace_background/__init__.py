"""Background replacement: a prompt read into a procedural backdrop, the subject composited in
place over it."""
