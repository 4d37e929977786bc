"""Shared runtime for engines: ONNX sessions, packaged model files, CPU thread settings."""
