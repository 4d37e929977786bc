"""Users, passwords, JWTs, API keys (hashed at rest) and plans."""
