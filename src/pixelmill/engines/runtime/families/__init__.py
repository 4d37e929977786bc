"""How each family of catalogued open models (:mod:`pixelmill.models.catalogue`) is fed and
read, one small module per family, each following its reference implementation (cited in the
module and in ``docs/models.md``): :mod:`.upscaler` (Real-ESRGAN), :mod:`.inpainter` (LaMa),
:mod:`.colorizer` (DDColor). Background-removal models keep their home in
``engines/background/models.py``. Engines get a runner from :func:`.presence.runner_for`
and never touch the network."""
