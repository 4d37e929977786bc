"""The storefront app surface: an activity log and product-enrichment jobs."""
