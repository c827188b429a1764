"""Run machinery shared by both systems, and nothing task- or model-specific.

- `config`: one schema of keys and defaults per entry point (validation and
  lookup written once).
- `workdir`: a workdir's config fingerprint (every key; `extend` for more steps).
- `loop`: the resumable chunked training loop (non-finite check, progress,
  metrics, orbax checkpoints, `Interrupted`).
- `checkpoint`: orbax save / restore-latest with fallback past corrupt steps.
- `metrics`: JSON-lines and TensorBoard metric writing.
- `seeds`, `parallel`: many seeds as a leading axis, sharded over a mesh;
  choosing a seed on validation and slicing it out.
- `logs`: the "neuroprog" logger, set up by entry points only.
"""
