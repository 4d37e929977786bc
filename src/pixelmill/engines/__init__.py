"""Pure image capabilities: each engine takes decoded images and typed parameters and returns
images and data. Engines know nothing of HTTP, the database, credits or webhooks."""
