"""The what-if study: what a scheduler change would do to a site's users (docs/whatif.md)."""
