"""Image analysis: what can honestly be found in a photo without a named-object model."""
