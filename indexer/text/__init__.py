"""Text as indexer reads it: tokens with character offsets, sentences, the BM25 analyzer,
span arithmetic, and restoring Turkish letters to ASCII-typed queries."""
