"""What several engines share: the lazy, locked model loader (``lazy``), ONNX sessions over
packaged model files (``onnx``), U²-Net-p segmentation (``segmentation``), OCR (``ocr``), face,
hand and person detection (``faces``), image measures (``measures``, ``blur``), colour plumbing
(``colour``) and the drawing primitives (``palette``, ``textures``).

Nothing here imports a capability: capabilities import the runtime, never the other way round.
"""
