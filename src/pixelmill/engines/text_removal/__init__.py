"""Text and watermark removal: OCR-detected text regions, a stroke mask, inpainting."""
