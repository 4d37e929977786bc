"""``python -m pixelmill_client``: the command line."""

import sys

from pixelmill_client.cli import main

sys.exit(main())
