"""Background removal: salient-object masks and RGBA cut-outs."""
