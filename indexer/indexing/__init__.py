"""The build use case: plan what changed, chunk, embed, hand it to the store
(`building`), keep it current (`watching`), what a built version was made from
(`manifest`), and `indexer chunk`'s pipeline without a store (`pipeline`)."""
