"""The operation catalog and the one synchronous pipeline every surface uses."""
