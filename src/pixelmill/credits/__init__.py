"""Credits: the ledger (the only door to a balance) and operation pricing."""
