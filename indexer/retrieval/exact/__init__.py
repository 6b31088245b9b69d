"""The exact-match tiers: identifiers, symbols and kinds a query names literally."""
